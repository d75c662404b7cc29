package configrollout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Data is what the cache knows of one ConfigMap or Secret: whether it
// exists, and the hash of each key's value.
type Data struct {
	found  bool
	hashes map[string]string
}

// Lookup reads a ConfigMap or Secret of a namespace from the cache.
type Lookup func(kind Kind, namespace, name string) (Data, error)

// State is what the pods of a DeployObject would get from the
// ConfigMaps and Secrets they use.
type State struct {
	// hash identifies the data the pods consume; empty when they use no
	// tracked object.
	Hash string
	// missing names each required object or key that does not exist.
	Missing []string
}

// StateOf hashes, for the refs of a DeployObject in namespace, the
// data the pods consume: for a key reference that key's value, for a
// whole-object reference every key's value, and for an optional reference
// whether the object, or key, exists. It does not depend on the order of
// refs, and a key no reference reads does not enter it.
func StateOf(namespace string, refs []Ref, lookup Lookup) (State, error) {
	if len(refs) == 0 {
		return State{}, nil
	}
	var lines, missing []string
	for _, r := range refs {
		d, err := lookup(r.kind, namespace, r.name)
		if err != nil {
			return State{}, fmt.Errorf("reading %s %s from cache: %w", r.kind, r.name, err)
		}
		obj := string(r.kind) + "/" + r.name
		if !d.found {
			if !r.optional {
				missing = append(missing, fmt.Sprintf("%s %s", r.kind, r.name))
			}
			lines = append(lines, obj+" absent")
			continue
		}
		keys := r.keys
		if keys == nil {
			keys = make([]string, 0, len(d.hashes))
			for k := range d.hashes {
				keys = append(keys, k)
			}
			// An object without keys still exists, which is data too.
			lines = append(lines, obj+" present")
		}
		for _, k := range keys {
			h, ok := d.hashes[k]
			switch {
			case ok:
				lines = append(lines, obj+"/"+k+"="+h)
			case !r.optional:
				missing = append(missing, fmt.Sprintf("key %s of %s %s", k, r.kind, r.name))
			default:
				lines = append(lines, obj+"/"+k+" absent")
			}
		}
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	slices.Sort(missing)
	return State{Hash: dataHash(strings.Join(lines, "\n")), Missing: slices.Compact(missing)}, nil
}

// dataHash is the hash of s, the configuration data the pods consume: 16
// hex digits of its SHA-256, 64 bits, plenty to tell one configuration
// from the next, and short enough for an annotation.
func dataHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// MissingMessage is the Ready message for missing, the required
// objects and keys that do not exist.
func MissingMessage(missing []string) string {
	return fmt.Sprintf("the pods need %s, which does not exist; the Deployment is left as it is until it does", strings.Join(missing, ", "))
}
