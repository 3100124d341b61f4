// Package report turns a run's results into what people read: the text
// summary, the verdicts and diagnoses of the article's diagnostic hook and
// failure-mode table, charts (gonum/plot, PNG and SVG) and the report
// documents (report.md, report.html). Everything here is a function of
// metrics.Results and metrics.Series, so a report can be redrawn from
// metrics.json and timeseries.csv alone.
//
// It is the rendering edge: nothing on the simulation's hot path imports
// it, and it imports neither the engine nor the client model.
package report
