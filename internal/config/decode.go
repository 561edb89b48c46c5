package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"github.com/devctl/devctl/internal/backend"
	"github.com/devctl/devctl/internal/capability"
	"github.com/devctl/devctl/internal/oomsim"
)

// settings is the configuration file's shape, which viper unmarshals the
// merged layers into. Each setting has its own type so that one decode
// hook can check it, whatever layer the value came from.
type settings struct {
	Device deviceSettings `mapstructure:"device"`
}

type deviceSettings struct {
	Preferred        preference `mapstructure:"preferred"`
	Precision        precision  `mapstructure:"precision"`
	FallbackEnabled  boolean    `mapstructure:"fallback_enabled"`
	MemoryStrategy   strategy   `mapstructure:"memory_strategy"`
	MemoryFraction   fraction   `mapstructure:"memory_fraction"`
	PlatformPriority priority   `mapstructure:"platform_priority"`
	AllowCPU         allowCPU   `mapstructure:"allow_cpu"`
}

type (
	preference string
	precision  string
	boolean    bool
	strategy   string
	fraction   float64
	priority   []backend.Backend
	allowCPU   bool
)

// keyOf names the key each setting type decodes, for messages.
var keyOf = map[reflect.Type]string{
	reflect.TypeFor[preference](): "device.preferred",
	reflect.TypeFor[precision]():  "device.precision",
	reflect.TypeFor[boolean]():    "device.fallback_enabled",
	reflect.TypeFor[strategy]():   "device.memory_strategy",
	reflect.TypeFor[fraction]():   "device.memory_fraction",
	reflect.TypeFor[priority]():   "device.platform_priority",
	reflect.TypeFor[allowCPU]():   "device.allow_cpu",
}

func (d deviceSettings) public() Device {
	return Device{
		Preferred:        string(d.Preferred),
		Precision:        capability.Precision(d.Precision),
		FallbackEnabled:  bool(d.FallbackEnabled),
		MemoryStrategy:   oomsim.Strategy(d.MemoryStrategy),
		MemoryFraction:   float64(d.MemoryFraction),
		PlatformPriority: []backend.Backend(d.PlatformPriority),
		AllowCPU:         bool(d.AllowCPU),
	}
}

// mode says what the decode hook checks: a user file alone is checked for
// shape (unknown keys, a list where one value belongs); the merged layers
// for values.
type mode bool

const (
	checkShape  mode = false
	checkValues mode = true
)

// fieldError is one setting the hook refused. A shape error is the file's
// structure; a value error names the value and what is accepted.
type fieldError struct {
	Key   string
	Value string
	Want  string
	Shape bool
}

func (e *fieldError) Error() string { return e.Key + ": " + e.Want }

// removedKeys are keys older versions accepted, with why they went, so an
// old file gets a message that says what to do.
var removedKeys = map[string]string{
	"device.enable_optimizations": "it was never used by any command; delete the line",
}

// readLayer decodes a user file on its own: YAML errors carry the line,
// unknown keys and wrongly shaped values are refused with the file's name.
// It returns the file's settings for merging and the keys it sets.
func readLayer(file string, data []byte) (map[string]any, []string, error) {
	if err := oneDocument(data); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrInvalid, file, err)
	}
	fv := viper.New()
	fv.SetConfigType("yaml")
	if err := fv.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %s", ErrInvalid, file, yamlError(err))
	}
	// Decode what the file holds, empty values included (viper's own
	// Unmarshal drops a "key: ~", which must be refused, not ignored).
	raw := map[string]any{}
	for _, k := range fv.AllKeys() {
		top, _, _ := strings.Cut(k, ".")
		raw[top] = fv.Get(top)
	}
	var md mapstructure.Metadata
	var shape settings
	dc := &mapstructure.DecoderConfig{Result: &shape}
	for _, opt := range decoderOptions(checkShape, &md) {
		opt(dc)
	}
	dec, err := mapstructure.NewDecoder(dc)
	if err == nil {
		err = dec.Decode(raw)
	}
	if err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return nil, nil, fmt.Errorf("%w: %s: %s", ErrInvalid, file, fe.Want)
		}
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrInvalid, file, err)
	}
	sort.Strings(md.Unused)
	for _, k := range md.Unused {
		top, _, nested := strings.Cut(k, ".")
		switch {
		case top != "device":
			return nil, nil, fmt.Errorf("%w: %s: unknown section %q (accepted: device)", ErrInvalid, file, top)
		case removedKeys[k] != "" && nested:
			return nil, nil, fmt.Errorf("%w: %s: %s was removed: %s", ErrInvalid, file, k, removedKeys[k])
		}
		return nil, nil, fmt.Errorf("%w: %s: unknown key %q (accepted: %s)", ErrInvalid, file, k, strings.Join(Keys, ", "))
	}
	var keys []string
	for _, k := range md.Keys {
		if slices.Contains(Keys, k) {
			keys = append(keys, k)
		}
	}
	return fv.AllSettings(), keys, nil
}

// oneDocument refuses a file of several YAML documents: viper reads the
// first and drops the rest without a word, so settings in a second
// document would be silently ignored. A trailing "---" with nothing after
// it is not a second document. Syntax errors are left to viper, which
// reports them with their line.
func oneDocument(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first, next yaml.Node
	if dec.Decode(&first) != nil {
		return nil
	}
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return errors.New(yamlError(err)) // viper reads the first document only: say it here
	case emptyDocument(&next):
		if dec.Decode(&yaml.Node{}) == io.EOF {
			return nil
		}
	}
	line := next.Line
	if line == 0 {
		line = first.Line
	}
	return fmt.Errorf("line %d: a second YAML document (after \"---\"); devctl reads one document: put every setting under one device: mapping", line)
}

func emptyDocument(n *yaml.Node) bool {
	return n.Kind == yaml.DocumentNode && len(n.Content) == 1 && n.Content[0].Kind == yaml.ScalarNode &&
		n.Content[0].Tag == "!!null" && n.Content[0].Value == ""
}

// yamlError turns a YAML error into one line: the parser lists several
// problems on separate lines under "unmarshal errors:".
func yamlError(err error) string {
	var pe viper.ConfigParseError
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		err = pe.Unwrap()
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var lines []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

func decoderOptions(m mode, md *mapstructure.Metadata) []viper.DecoderConfigOption {
	return []viper.DecoderConfigOption{
		viper.DecodeHook(mapstructure.DecodeHookFuncValue(func(from, to reflect.Value) (any, error) {
			return hook(m, from, to)
		})),
		func(c *mapstructure.DecoderConfig) {
			c.DecodeNil = true // so that "key: ~" reaches the hook
			c.Metadata = md
		},
	}
}

// describe turns a decode error of the merged layers into one line naming
// the key, the value, where it came from and what is accepted.
func describe(err error, sources map[string]Source) error {
	var fe *fieldError
	if !errors.As(err, &fe) {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	src := sources[fe.Key]
	switch {
	case fe.Shape && src.Layer == LayerFile:
		return fmt.Errorf("%w: %s: %s", ErrInvalid, src.Name, fe.Want)
	case fe.Key == "device.platform_priority" && fe.Value == "":
		return fmt.Errorf("%w: %s", ErrInvalid, fe.Want)
	case fe.Key == "device.platform_priority":
		return fmt.Errorf("%w: device.platform_priority entry %q (from %s): %s", ErrInvalid, fe.Value, src, fe.Want)
	}
	return fmt.Errorf("%w: %s %q (from %s): %s", ErrInvalid, fe.Key, fe.Value, src, fe.Want)
}

// hook checks and converts one setting. Values of other types pass
// through unchanged.
func hook(m mode, from, to reflect.Value) (any, error) {
	if to.Type() == reflect.TypeFor[deviceSettings]() {
		if from.Kind() != reflect.Map || from.IsNil() {
			return nil, &fieldError{Key: "device", Want: "device must be a mapping of settings", Shape: true}
		}
		return from.Interface(), nil
	}
	key, ok := keyOf[to.Type()]
	if !ok {
		return from.Interface(), nil
	}
	if to.Type() == reflect.TypeFor[priority]() {
		return decodePriority(m, key, from)
	}
	// A nil YAML value arrives as the zero value of the target type.
	nilValue := from.Type() == to.Type()
	if kind := shapeOf(from, nilValue); kind != "" {
		return nil, &fieldError{Key: key, Want: fmt.Sprintf("%s: want a single value, not %s", key, kind), Shape: true}
	}
	if m == checkShape {
		return reflect.Zero(to.Type()).Interface(), nil
	}
	raw := strings.TrimSpace(fmt.Sprint(from.Interface()))
	word := strings.ToLower(raw)
	bad := func(value, want string) error { return &fieldError{Key: key, Value: value, Want: want} }
	switch to.Type() {
	case reflect.TypeFor[preference]():
		p, err := backend.ParsePreference(raw)
		if err != nil {
			return nil, bad(word, err.Error())
		}
		return preference(p), nil
	case reflect.TypeFor[precision]():
		if word == string(capability.Auto) {
			return precision(word), nil
		}
		p, err := capability.ParsePrecision(word)
		if err != nil || !slices.Contains(Precisions, p) {
			return nil, bad(word, "want one of "+strings.Join(capability.Names(Precisions), ", "))
		}
		return precision(p), nil
	case reflect.TypeFor[strategy]():
		s, ok := oomsim.Parse(word, Strategies)
		if !ok {
			return nil, bad(word, "want one of "+oomsim.List(Strategies))
		}
		return strategy(s), nil
	case reflect.TypeFor[boolean](), reflect.TypeFor[allowCPU]():
		b, err := parseBool(from.Interface())
		if err != nil {
			return nil, bad(fmt.Sprint(from.Interface()), "want true or false")
		}
		if to.Type() == reflect.TypeFor[allowCPU]() {
			return allowCPU(b), nil
		}
		return boolean(b), nil
	case reflect.TypeFor[fraction]():
		f, err := ParseFraction(raw)
		if err != nil {
			return nil, bad(raw, err.Error())
		}
		return fraction(f), nil
	}
	return from.Interface(), nil
}

// shapeOf names a value that is not a single scalar ("a list"), or "".
func shapeOf(v reflect.Value, isNil bool) string {
	switch {
	case isNil:
		return "an empty value"
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Array:
		return "a list"
	case v.Kind() == reflect.Map:
		return "a mapping"
	}
	return ""
}

// decodePriority reads a list of backends, or one comma-separated string
// (as an environment variable or flag gives it).
func decodePriority(m mode, key string, from reflect.Value) (any, error) {
	var items []string
	switch {
	case from.Kind() == reflect.String:
		items = []string{from.String()}
	case (from.Kind() == reflect.Slice || from.Kind() == reflect.Array) && !from.IsNil():
		for i := range from.Len() {
			s, ok := from.Index(i).Interface().(string)
			if !ok {
				return nil, &fieldError{Key: key, Want: fmt.Sprintf("%s entry %v: want backend names such as [cuda, cpu]", key, from.Index(i).Interface()), Shape: true}
			}
			items = append(items, s)
		}
	default:
		return nil, &fieldError{Key: key, Want: key + ": want a list of backends such as [cuda, cpu]", Shape: true}
	}
	if m == checkShape {
		return priority(nil), nil
	}
	list, err := backend.ParseList(items...)
	if ee := (*backend.EntryError)(nil); errors.As(err, &ee) {
		return nil, &fieldError{Key: key, Value: ee.Entry, Want: ee.Err.Error()}
	}
	if len(list) == 0 {
		return nil, &fieldError{Key: key, Want: "device.platform_priority is empty: list at least one backend (" + backend.Names() + ")"}
	}
	return priority(list), nil
}

func parseBool(v any) (bool, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(b)) {
		case "true", "1", "yes", "on":
			return true, nil
		case "false", "0", "no", "off":
			return false, nil
		}
	case int:
		if b == 0 || b == 1 {
			return b == 1, nil
		}
	}
	return false, errors.New("not a boolean")
}
