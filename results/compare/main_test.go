package compare

import (
	"os"
	"testing"

	"github.com/bootbench/bootbench/internal/testkit/storetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	storetest.StopShared()
	os.Exit(code)
}
