package doctor

// Lookup returns a check by id.
func Lookup(id string) *Check {
	for _, c := range All() {
		if c.ID == id {
			return c
		}
	}
	return nil
}
