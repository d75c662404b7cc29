package children

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
)

// hashOf is a short hash of v as JSON, which identifies a desired child
// across syncs and restarts.
func hashOf(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	h := fnv.New64a()
	h.Write(data)
	return strconv.FormatUint(h.Sum64(), 16), nil
}
