// Package scenarios is limitsim's file format: the scenario schema, strict
// TOML decoding (every problem names the file, the key and the line),
// checks between keys, the bundled example scenarios, and Build, which turns
// a scenario into the client model's plain configuration (sim/client).
//
// Imports point one way: scenarios → sim/client → {models, upstream,
// report/metrics} → clock. The file format never reaches into the
// simulation; the simulation never sees TOML.
package scenarios
