package children

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
)

// desiredHash is a short hash of v, a desired child or its spec, as JSON:
// it tells across syncs and restarts what the controller last wrote.
func desiredHash(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	h := fnv.New64a()
	h.Write(data)
	return strconv.FormatUint(h.Sum64(), 16), nil
}
