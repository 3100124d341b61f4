package report_test

import "fmt"

func fmtSscanf(s string, w, h *int) (int, error) { return fmt.Sscanf(s, "%dx%d", w, h) }
