package config

import "testing"

func BenchmarkLoadDefaults(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Load(LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
