package vbench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/needs"
)

// TestUBootEnvMatchesMkenvimage uses u-boot-tools' mkenvimage as the oracle.
func TestUBootEnvMatchesMkenvimage(t *testing.T) {
	vars := []string{"bootdelay=0", "bootcmd=dhcp && source ${fileaddr}"}
	got, err := UBootEnv(vars, ubootEnvSize)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("mkenvimage"); err != nil {
		needs.Unmet(t, "mkenvimage missing (u-boot-tools; make deps installs it)")
	}
	dir := t.TempDir()
	txt := filepath.Join(dir, "env.txt")
	os.WriteFile(txt, []byte("bootdelay=0\nbootcmd=dhcp && source ${fileaddr}\n"), 0o644)
	out := filepath.Join(dir, "env.bin")
	if b, err := exec.Command("mkenvimage", "-s", "0x40000", "-o", out, txt).CombinedOutput(); err != nil {
		t.Fatalf("mkenvimage: %v: %s", err, b)
	}
	want, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Errorf("environment differs from mkenvimage's (first bytes %x vs %x)", got[:16], want[:16])
	}
}

func TestUBootEnvTooBig(t *testing.T) {
	if _, err := UBootEnv([]string{"x=" + string(make([]byte, 100))}, 64); err == nil {
		t.Error("oversized environment accepted")
	}
}
