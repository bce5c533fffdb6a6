//go:build !race

package loader

// raceEnabled: see race_on_test.go.
const raceEnabled = false
