package i18n

import "sort"

// Languages lists the languages with at least one message, sorted.
func (c *Catalog) Languages() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.msgs))
	for l := range c.msgs {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}
