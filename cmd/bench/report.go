package main

import (
	"fmt"
	"io"
)

// finishReports builds the derived files of a run directory.
// TODO: wire report.Build when the report package lands.
func finishReports(dir string, stdout, stderr io.Writer) error { return nil }

func reportCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "bench report: not built yet")
	return exitUsage
}
