# A plan deletes, replaces and recreates at most `max_destructive` pipes (3 unless the data says
# otherwise: conftest --data with {"cloudctl": {"max_destructive": N}}).
package main

import rego.v1

max_destructive := object.get(data, ["cloudctl", "max_destructive"], 3)

deny contains msg if {
	input.summary.destructive > max_destructive
	msg := sprintf("max-destructive: the plan deletes, replaces or recreates %d pipes, more than %d", [input.summary.destructive, max_destructive])
}
