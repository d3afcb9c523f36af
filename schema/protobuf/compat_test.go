package protobuf

import (
	"testing"

	"sharq/schema/internal/compattest"
)

func TestCompatibilityTable(t *testing.T) {
	compattest.Run(t, Format, "testdata/compat.txt")
}
