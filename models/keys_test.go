package models_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/limitsim/limitsim/models"
)

// Every key of every kind sets the Params field a scenario writes under
// its name, with a default and a least value of that field's type: a key
// declared with the wrong field would be read under one name and written
// back under another.
func TestKeysMatchTheirFields(t *testing.T) {
	var p models.Params
	base := reflect.ValueOf(&p).Elem()
	fieldAt := map[uintptr]reflect.StructField{}
	for i := range base.NumField() {
		fieldAt[base.Field(i).Addr().Pointer()] = base.Type().Field(i)
	}
	for _, k := range models.Kinds() {
		seen := map[string]bool{}
		for _, key := range k.Keys {
			if seen[key.Name] {
				t.Errorf("kind %s lists %s twice", k.Name, key.Name)
			}
			seen[key.Name] = true
			ptr := reflect.ValueOf(key.Field(&p))
			f, ok := fieldAt[ptr.Pointer()]
			if !ok {
				t.Errorf("kind %s: key %s sets no field of Params", k.Name, key.Name)
				continue
			}
			if name, _, _ := strings.Cut(f.Tag.Get("toml"), ","); name != key.Name {
				t.Errorf("kind %s: key %s sets Params.%s, written as %q", k.Name, key.Name, f.Name, name)
			}
			if key.Doc == "" || key.Type == "" {
				t.Errorf("kind %s: key %s has no doc line or type", k.Name, key.Name)
			}
			checkValueTypes(t, k, key, f.Type)
		}
	}
}

// checkValueTypes checks that key's default and least value are of the
// type its field (of type ft) holds.
func checkValueTypes(t *testing.T, k models.Kind, key models.Key, ft reflect.Type) {
	t.Helper()
	var want reflect.Type
	switch ft {
	case reflect.TypeFor[float64](), reflect.TypeFor[*float64]():
		want = reflect.TypeFor[float64]()
	case reflect.TypeFor[int64]():
		want = reflect.TypeFor[int64]()
	case reflect.TypeFor[time.Duration]():
		want = reflect.TypeFor[time.Duration]()
	case reflect.TypeFor[models.Jitter]():
		if _, ok := key.Default.(string); !ok || key.Min != nil {
			t.Errorf("kind %s: jitter key %s needs a default text and no least value", k.Name, key.Name)
		}
		return
	default:
		t.Errorf("kind %s: key %s sets a field of type %v, which no scenario reads", k.Name, key.Name, ft)
		return
	}
	if key.Default != nil && reflect.TypeOf(key.Default) != want || key.Default == nil && key.DefaultOf == nil {
		t.Errorf("kind %s: key %s's default %#v is not a %v", k.Name, key.Name, key.Default, want)
	}
	if reflect.TypeOf(key.Min) != want {
		t.Errorf("kind %s: key %s's least value %#v is not a %v", k.Name, key.Name, key.Min, want)
	}
}
