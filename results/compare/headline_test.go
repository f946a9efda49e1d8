package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestHeadline: every comparison starts with one line that sums it up, in
// text and in JSON. Five metrics at 680 and 800 MHz, efficiencies 0.98,
// 0.99, 1.00, 1.01 and 0.70 (one bound by memory): median ratio
// 1.176·1.00, middle half of the efficiencies from the quartiles.
func TestHeadline(t *testing.T) {
	names := []string{"md5@1024", "sha1@1024", "sha256@1024", "aes-128-cbc@1024", "memcpy"}
	units := []string{"B/s", "B/s", "B/s", "B/s", "B/s"}
	cr := 800.0 / 680
	base := []float64{100, 100, 100, 100, 100}
	cand := []float64{100 * cr * 0.98, 100 * cr * 0.99, 100 * cr, 100 * cr * 1.01, 100 * cr * 0.70}
	runs := append(series("rb450g", 680, names, units, base), series("rb450g", 800, names, units, cand)...)
	c, err := compareClocks(Options{By: ByClock, Board: "rb450g"}, runs)
	if err != nil {
		t.Fatal(err)
	}
	// R8 quartiles of 0.70 0.98 0.99 1.00 1.01: 0.70+⅔·0.28 = 0.8867 and
	// 1.00+⅓·0.01 = 1.0033.
	const want = "rb450g 800 vs 680 MHz: clock ×1.176, throughput ×1.165 (median of 5 metrics, efficiency 0.990, 0.887–1.003): scales with the clock"
	var txt bytes.Buffer
	if err := WriteText(&txt, c); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(txt.String(), "\n"); first != want {
		t.Errorf("text starts\n%q\nwant\n%q", first, want)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Comparisons []struct {
			ClockRatio float64 `json:"clock_ratio"`
			Summary    struct {
				Metrics    int     `json:"metrics"`
				Throughput float64 `json:"throughput_ratio"`
				Efficiency float64 `json:"scaling_efficiency"`
				Low, High  float64
				Verdict    string `json:"verdict"`
				Headline   string `json:"headline"`
			} `json:"summary"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	s := got.Comparisons[0].Summary
	if s.Headline != want || s.Metrics != 5 || s.Throughput != 1.1647 || s.Efficiency != 0.99 ||
		s.Low != 0.8867 || s.High != 1.0033 || s.Verdict != "scales with the clock" || got.Comparisons[0].ClockRatio != 1.1765 {
		t.Errorf("JSON summary %+v (clock ratio %v)", s, got.Comparisons[0].ClockRatio)
	}
}

func TestScalingVerdict(t *testing.T) {
	tests := []struct {
		eff  float64
		want string
	}{
		{1.0, "scales with the clock"}, {0.96, "scales with the clock"}, {1.04, "scales with the clock"},
		{0.9, "scales less than the clock"}, {1.1, "scales more than the clock"},
		{0.7, "sublinear"}, {1.3, "superlinear"},
	}
	for _, tt := range tests {
		if got := scalingVerdict(tt.eff); got != tt.want {
			t.Errorf("scalingVerdict(%v) = %q, want %q", tt.eff, got, tt.want)
		}
	}
}
