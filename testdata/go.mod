module github.com/devctl/devctl/testdata

// This go.mod keeps the fixture trees out of the devctl module's zip: module
// zips refuse file names with ":" (PCI addresses in sysfs fixtures), and
// without it `go install github.com/devctl/devctl/cmd/devctl@latest` fails.

go 1.26
