# A protected pipe (`lifecycle: {protect: true}`) is never destroyed: no delete, replace or recreate
# of it passes, whatever the tool that applies the plan checks itself.
package main

import rego.v1

deny contains msg if {
	some action in input.actions
	action.action in {"delete", "replace", "recreate"}
	action.lifecycle.protect
	msg := sprintf("protected: %s: a %s of a protected pipe", [action.name, action.action])
}

deny contains msg if {
	some action in input.actions
	action.protected
	not action.lifecycle.protect
	msg := sprintf("protected: %s: its recorded lifecycle protects it", [action.name])
}
