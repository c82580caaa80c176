# A protected pipe (`lifecycle: {protect: true}`) is never destroyed: no action that sends its DELETE
# (a delete, a replace, the recreate of a failed pipe) passes, whatever the tool that applies the plan
# checks itself. The recreate of a pipe gone already deletes nothing and passes.
package main

import rego.v1

deny contains msg if {
	some action in input.actions
	action.lifecycle.protect
	some call in action.calls
	startswith(call, "DELETE ")
	msg := sprintf("protected: %s: a %s of a protected pipe deletes it", [action.name, action.action])
}

deny contains msg if {
	some action in input.actions
	action.protected
	not action.lifecycle.protect
	msg := sprintf("protected: %s: its recorded lifecycle protects it", [action.name])
}
