package gen

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct{ A int }

type embeds struct{ inner }

type stringOpt struct {
	N int `json:"n,string"`
}

type rawBytes struct{ B []byte }

type foreign struct{ T time.Duration } // an int64 kind: fine

type foreignStruct struct{ T time.Time } // has MarshalJSON

type dup struct {
	A int `json:"B"`
	B int // named B too
}

type badMap struct{ M map[string]int }

func TestGenerateRefusesWhatItCannotCopy(t *testing.T) {
	for _, tt := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[embeds](), "embedded fields"},
		{reflect.TypeFor[stringOpt](), `tag option "string"`},
		{reflect.TypeFor[rawBytes](), "base64"},
		{reflect.TypeFor[foreignStruct](), "implements json.Marshaler"},
		{reflect.TypeFor[dup](), "share the JSON name"},
		{reflect.TypeFor[badMap](), "only map[string]any"},
		{reflect.TypeFor[int](), "not a struct"},
	} {
		_, err := Generate("gen", tt.typ)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.typ, err, tt.want)
		}
	}
	if _, err := Generate("gen", reflect.TypeFor[foreign]()); err != nil {
		t.Errorf("a named int64 from another package: %v", err)
	}
}
