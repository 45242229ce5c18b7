//go:build !unix

package gateway

import "os"

// Without flock there is no telling a dead owner's staging folder from a
// live one's: nothing is swept, and a folder is removed by its Close only.
func holdSpillDir(string) (*os.File, error) { return nil, nil }

func sweepSpillDirs(string, string) int { return 0 }
