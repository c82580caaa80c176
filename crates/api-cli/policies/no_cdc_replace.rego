# No plan replaces (or deletes and recreates) a Postgres CDC pipe: a new one takes a new initial
# snapshot of every mapped table (the plan's impact `snapshot-again`). Such a change is made by a
# person, on purpose, outside the pipeline.
package main

import rego.v1

deny contains msg if {
	some action in input.actions
	action.action in {"replace", "recreate"}
	some side in [action.before, action.after]
	side.source.postgres
	msg := sprintf("no-cdc-replace: %s: a %s of a Postgres CDC pipe snapshots every table again", [action.name, action.action])
}
