package report

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Style colours headings and statuses on a terminal and does nothing when
// output is piped or colour is off (--no-color, NO_COLOR).
type Style struct {
	r     *lipgloss.Renderer
	color bool
}

// NewStyle returns a style for w. color should already account for
// terminals, --no-color and NO_COLOR.
func NewStyle(w io.Writer, color bool) *Style {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return &Style{r: r, color: color}
}

func (s *Style) fg(c string, bold bool, text string) string {
	if !s.color {
		return text
	}
	return s.r.NewStyle().Foreground(lipgloss.Color(c)).Bold(bold).Render(text)
}

// Title styles a heading.
func (s *Style) Title(t string) string { return s.fg("39", true, t) }

// Label styles a key in a key/value block.
func (s *Style) Label(t string) string { return s.fg("245", false, t) }

// OK, Warn, Fail and Dim colour statuses.
func (s *Style) OK(t string) string   { return s.fg("42", true, t) }
func (s *Style) Warn(t string) string { return s.fg("214", true, t) }
func (s *Style) Fail(t string) string { return s.fg("196", true, t) }
func (s *Style) Dim(t string) string  { return s.fg("245", false, t) }
