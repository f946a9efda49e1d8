package compare

import (
	"os"
	"testing"

	"github.com/bootbench/bootbench/results/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	storetest.StopShared()
	os.Exit(code)
}
