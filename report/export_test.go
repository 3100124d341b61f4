package report

// What the external tests (package report_test) use of the internal ones.
var (
	// MarkdownSections reads a report's headings and table rows from its
	// Markdown.
	MarkdownSections = mdSections
	// HTMLSections reads the same from its HTML.
	HTMLSections = htmlSections
	// ChromiumDOM renders a page in headless Chromium with a probe script.
	ChromiumDOM = chromiumDOM
)
