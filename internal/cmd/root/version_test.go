package root

import (
	"runtime/debug"
	"testing"
)

func TestResolveVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	tests := []struct {
		name    string
		ldflags string
		info    *debug.BuildInfo
		ok      bool
		want    string
	}{
		{"a release build's ldflags win", "v1.4.0", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, true, "v1.4.0"},
		{"go install @v1.2.3 reports the module version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "v1.2.3"},
		{"go install @latest on an untagged commit reports the pseudo-version", "dev", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124100000-abcdef123456"}}, true, "v0.0.0-20261124100000-abcdef123456"},
		{"a local build names its revision", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "false")}, true, "dev-0123456789ab"},
		{"a local build with changes says dirty", "dev", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "true")}, true, "dev-0123456789ab-dirty"},
		{"no build info is dev", "dev", nil, false, "dev"},
		{"no VCS stamp is dev", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ResolveVersion(tc.ldflags, tc.info, tc.ok); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
