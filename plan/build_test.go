package plan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/bootbench/bootbench/boards"
)

// TestKernelLookup: the plan's kernel is the job's file, else the profile's
// kernel as its Kernels builder makes it (fetched from Debian, or built by
// bootbench when the profile names a build), else none.
func TestKernelLookup(t *testing.T) {
	file := filepath.Join(t.TempDir(), "vmlinux")
	if err := os.WriteFile(file, []byte("kernel"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []boards.DebianKernel
	bs := Builders{Kernels: func(_ context.Context, k boards.DebianKernel) (string, error) {
		asked = append(asked, k)
		return file, nil
	}}
	tests := []struct {
		name   string
		plan   Plan
		asked  []boards.DebianKernel
		noneOK bool
	}{
		{"a file", Plan{Kernel: file}, nil, false},
		{"Debian's", Plan{Debian: boards.DebianKernel{DebianArch: "mipsel", Flavour: "4kc-malta"}}, []boards.DebianKernel{{DebianArch: "mipsel", Flavour: "4kc-malta"}}, false},
		{"built", Plan{Debian: boards.DebianKernel{Build: "malta-le"}}, []boards.DebianKernel{{Build: "malta-le"}}, false},
		{"none", Plan{}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			got, err := bs.Kernel(context.Background(), tt.plan)
			if tt.noneOK {
				if !errors.Is(err, ErrNoKernel) {
					t.Fatalf("got %q, %v; want ErrNoKernel", got, err)
				}
				return
			}
			if err != nil || got != file {
				t.Fatalf("got %q, %v", got, err)
			}
			if len(asked) != len(tt.asked) || (len(asked) == 1 && asked[0] != tt.asked[0]) {
				t.Errorf("asked the builder for %+v, want %+v", asked, tt.asked)
			}
		})
	}
}
