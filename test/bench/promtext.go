package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// sample is one line of the Prometheus text exposition format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// snapshot is one scrape of the controller's /metrics. A nil snapshot reads
// as all zeros, which is what a process that has just started would report,
// so it serves as the baseline of a fresh controller.
type snapshot []sample

// parseText reads the text exposition format. Only what the benchmark needs
// is supported: comments are skipped and timestamps ignored.
func parseText(r io.Reader) (snapshot, error) {
	var out snapshot
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("parsing metrics line %q: %w", line, err)
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading metrics: %w", err)
	}
	return out, nil
}

func parseSample(line string) (sample, error) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, errors.New("no value")
	}
	s.name, line = line[:i], line[i:]
	if line[0] == '{' {
		var err error
		if line, err = parseLabels(line[1:], s.labels); err != nil {
			return s, err
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, errors.New("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("value: %w", err)
	}
	s.value = v
	return s, nil
}

// parseLabels reads `key="value",...}` into labels and returns what follows
// the closing brace. Label values may contain escaped quotes, backslashes
// and newlines, and any character, commas and braces included.
func parseLabels(in string, labels map[string]string) (string, error) {
	for {
		in = strings.TrimLeft(in, " ,")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.Index(in, `="`)
		if eq <= 0 {
			return "", errors.New("malformed label")
		}
		key := in[:eq]
		in = in[eq+2:]
		var val strings.Builder
		for {
			if in == "" {
				return "", fmt.Errorf("unterminated value of label %s", key)
			}
			c := in[0]
			in = in[1:]
			if c == '"' {
				break
			}
			if c == '\\' && in != "" {
				if in[0] == 'n' {
					val.WriteByte('\n')
				} else {
					val.WriteByte(in[0])
				}
				in = in[1:]
				continue
			}
			val.WriteByte(c)
		}
		labels[key] = val.String()
	}
}

// sum adds up the samples of name whose labels include every key/value pair
// of match, given as key1, value1, key2, value2, ...
func (s snapshot) sum(name string, match ...string) float64 {
	var total float64
	for _, smp := range s {
		if smp.name == name && hasLabels(smp.labels, match) {
			total += smp.value
		}
	}
	return total
}

func hasLabels(labels map[string]string, match []string) bool {
	for i := 0; i+1 < len(match); i += 2 {
		if labels[match[i]] != match[i+1] {
			return false
		}
	}
	return true
}

// sumBy adds up the samples of name by the key that key derives from their
// labels; samples for which key returns false are left out.
func (s snapshot) sumBy(name string, key func(labels map[string]string) (string, bool)) map[string]float64 {
	out := map[string]float64{}
	for _, smp := range s {
		if smp.name != name {
			continue
		}
		if k, ok := key(smp.labels); ok {
			out[k] += smp.value
		}
	}
	return out
}

// byLabel groups samples by the value of one label.
func byLabel(name string) func(map[string]string) (string, bool) {
	return func(labels map[string]string) (string, bool) {
		v, ok := labels[name]
		return v, ok
	}
}
