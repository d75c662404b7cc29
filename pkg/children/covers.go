package children

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Covers reports whether live holds every value that desired sets. It is
// how the controller judges a child in line with the spec without a model
// of the API server's defaulting: what desired leaves unset (zero) may hold
// anything live, such as a default the server filled in, and so may the
// extra keys of maps and the extra elements of lists keyed by name, such as
// an annotation or a container others added.
//
// Quantities compare by value, as the server may store another form of the
// same number. Lists of structs with a Name field are matched by name when
// desired names every element once, as server-side apply merges them;
// other lists must match element by element.
func Covers(live, desired any) bool {
	return coversValue(reflect.ValueOf(live), reflect.ValueOf(desired))
}

var (
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[metav1.Time]()
)

func coversValue(live, desired reflect.Value) bool {
	if desired.IsZero() {
		return true
	}
	switch desired.Kind() {
	case reflect.Pointer, reflect.Interface:
		// What a pointer points at is set, even when it is a zero value:
		// automountServiceAccountToken: false, emptyDir: {}.
		if live.IsNil() {
			return false
		}
		if d := desired.Elem(); d.IsZero() && d.Kind() != reflect.Struct {
			return live.Elem().IsZero()
		}
		return coversValue(live.Elem(), desired.Elem())
	case reflect.Struct:
		switch desired.Type() {
		case quantityType:
			l, d := live.Interface().(resource.Quantity), desired.Interface().(resource.Quantity)
			return l.Cmp(d) == 0
		case timeType:
			return true
		}
		for i := range desired.NumField() {
			if !coversValue(live.Field(i), desired.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		for it := desired.MapRange(); it.Next(); {
			lv := live.MapIndex(it.Key())
			if !lv.IsValid() || !coversValue(lv, it.Value()) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if byName, ok := namesOf(desired); ok {
			return coversByName(live, desired, byName)
		}
		if live.Len() != desired.Len() {
			return false
		}
		for i := range desired.Len() {
			if !coversValue(live.Index(i), desired.Index(i)) {
				return false
			}
		}
		return true
	}
	return live.Equal(desired)
}

// namesOf returns the index of each element of the list s by its Name
// field, when its elements are structs that have one and every element has
// a distinct, non-empty name.
func namesOf(s reflect.Value) (map[string]int, bool) {
	elem := s.Type().Elem()
	if elem.Kind() != reflect.Struct {
		return nil, false
	}
	f, ok := elem.FieldByName("Name")
	if !ok || f.Type.Kind() != reflect.String || len(f.Index) != 1 {
		return nil, false
	}
	names := make(map[string]int, s.Len())
	for i := range s.Len() {
		n := s.Index(i).Field(f.Index[0]).String()
		if _, dup := names[n]; n == "" || dup {
			return nil, false
		}
		names[n] = i
	}
	return names, true
}

func coversByName(live, desired reflect.Value, names map[string]int) bool {
	f, _ := desired.Type().Elem().FieldByName("Name")
	found := 0
	for i := range live.Len() {
		j, ok := names[live.Index(i).Field(f.Index[0]).String()]
		if !ok {
			continue
		}
		if !coversValue(live.Index(i), desired.Index(j)) {
			return false
		}
		found++
	}
	return found == len(names)
}

// CoversJSON is Covers for objects held as JSON values (maps, lists and
// scalars, as unstructured objects hold them): live holds every value of
// desired; extra keys of live's maps are allowed, lists must match element
// by element. Numbers compare by value, as a decoder may hold an integer as
// int64 or float64.
func CoversJSON(live, desired any) bool {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range d {
			lv, ok := l[k]
			if !ok || !CoversJSON(lv, v) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return false
		}
		for i := range d {
			if !CoversJSON(l[i], d[i]) {
				return false
			}
		}
		return true
	}
	if ln, ok := jsonNumber(live); ok {
		dn, ok := jsonNumber(desired)
		return ok && ln == dn
	}
	return live == desired
}

// jsonNumber is v as a float64, when it is a number.
func jsonNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	}
	return 0, false
}
