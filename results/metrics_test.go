package results

import (
	"reflect"
	"testing"
)

func TestSortMetrics(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{
			"block sizes numerically",
			[]string{"md5@8192", "md5@1024", "md5@16", "md5@256", "md5@64", "md5@16384"},
			[]string{"md5@16", "md5@64", "md5@256", "md5@1024", "md5@8192", "md5@16384"},
		},
		{
			"algorithm then block",
			[]string{"sha256@16", "aes-128-cbc@1024", "sha1@1024", "aes-128-cbc@16", "sha256@1024", "sha512@16"},
			[]string{"aes-128-cbc@16", "aes-128-cbc@1024", "sha1@1024", "sha256@16", "sha256@1024", "sha512@16"},
		},
		{
			"throughput before ops, key sizes naturally",
			[]string{"tcp-throughput", "rsa4096-sign", "rsa512-sign", "md5@16", "rsa2048-verify", "rsa2048-sign", "dd-write"},
			[]string{"md5@16", "dd-write", "rsa512-sign", "rsa2048-sign", "rsa2048-verify", "rsa4096-sign", "tcp-throughput"},
		},
		{
			"non-numeric suffix is not a block",
			[]string{"x@abc", "x@2", "x@10"},
			[]string{"x@2", "x@10", "x@abc"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := make([]Metric, len(tt.in))
			for i, n := range tt.in {
				ms[i] = Metric{Name: n}
			}
			SortMetrics(ms)
			var got []string
			for _, m := range ms {
				got = append(got, m.Name)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{28782800, "28782800"},
		{1e15, "1000000000000000"},
		{123.4, "123.4"},
		{0.126, "0.13"},
		{16160.43, "16160.43"},
		{0, "0"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.in); got != tt.want {
			t.Errorf("FormatValue(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
