package compare

import (
	"fmt"

	"github.com/bootbench/bootbench/results"
)

// runValues holds the metrics of runs read from a store in little
// memory: a comparison of thousands of runs a side keeps each metric's
// value alone (8 bytes, not a name, unit and value), the names and units
// once for every run that measured the same.
type runValues struct {
	at    map[results.RunID]valuesAt
	lists []metricList // the distinct lists of names and units
}

// valuesAt is a run's values: of list's metrics, in its order.
type valuesAt struct {
	list   int
	values []float64
}

// metricList is the names and units of a run's metrics, as read.
type metricList struct{ names, units []string }

func newRunValues() *runValues {
	return &runValues{at: map[results.RunID]valuesAt{}}
}

// take keeps r's metrics and takes them from r.
func (v *runValues) take(r *results.Run) {
	at := valuesAt{list: v.listOf(r.Metrics), values: make([]float64, len(r.Metrics))}
	for i, m := range r.Metrics {
		at.values[i] = m.Value
	}
	v.at[r.ID] = at
	r.Metrics = nil
}

// listOf is the index of the list ms's names and units are, added if
// new. Runs of one benchmark share one; the last found is tried first.
func (v *runValues) listOf(ms []results.Metric) int {
	for i := len(v.lists) - 1; i >= 0; i-- {
		if v.lists[i].is(ms) {
			return i
		}
	}
	var l metricList
	for _, m := range ms {
		l.names, l.units = append(l.names, m.Name), append(l.units, m.Unit)
	}
	v.lists = append(v.lists, l)
	return len(v.lists) - 1
}

func (l metricList) is(ms []results.Metric) bool {
	if len(ms) != len(l.names) {
		return false
	}
	for i, m := range ms {
		if m.Name != l.names[i] || m.Unit != l.units[i] {
			return false
		}
	}
	return true
}

// metricValues collects each metric's values over runs, in the runs'
// order, from the values v keeps or, for a run it does not keep (nil v,
// runs not read from a store), its own metrics.
func (v *runValues) metricValues(runs []results.Run) (map[string][]float64, map[string]string, error) {
	vals, units := v.room(runs), map[string]string{}
	add := func(r *results.Run, name, unit string, value float64) error {
		if u, ok := units[name]; ok && u != unit {
			return fmt.Errorf("metric %s is in %s in one run and %s in run %s", name, u, unit, r.ID)
		}
		units[name] = unit
		vals[name] = append(vals[name], value)
		return nil
	}
	for i := range runs {
		r := &runs[i]
		if at, ok := v.of(r.ID); ok {
			l := v.lists[at.list]
			for j, name := range l.names {
				if err := add(r, name, l.units[j], at.values[j]); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		for _, m := range r.Metrics {
			if err := add(r, m.Name, m.Unit, m.Value); err != nil {
				return nil, nil, err
			}
		}
	}
	return vals, units, nil
}

// room is an empty slice for each metric of runs, made at the size its
// values will take: a side of thousands of runs would otherwise grow a
// slice of each metric a value at a time, copying it a score of times.
func (v *runValues) room(runs []results.Run) map[string][]float64 {
	sizes := map[string]int{}
	var perList []int // runs whose values v keeps, by list
	if v != nil {
		perList = make([]int, len(v.lists))
	}
	for i := range runs {
		if at, ok := v.of(runs[i].ID); ok {
			perList[at.list]++
			continue
		}
		for _, m := range runs[i].Metrics {
			sizes[m.Name]++
		}
	}
	for l, n := range perList {
		if n == 0 {
			continue // a list of other runs': none of its names is of these
		}
		for _, name := range v.lists[l].names {
			sizes[name] += n
		}
	}
	vals := make(map[string][]float64, len(sizes))
	for name, n := range sizes {
		vals[name] = make([]float64, 0, n)
	}
	return vals
}

// of is where run id's values are, if v keeps them.
func (v *runValues) of(id results.RunID) (valuesAt, bool) {
	if v == nil {
		return valuesAt{}, false
	}
	at, ok := v.at[id]
	return at, ok
}
