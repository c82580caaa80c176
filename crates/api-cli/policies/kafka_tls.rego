# Every Kafka pipe a plan creates (or creates again) reaches its brokers over TLS.
#
# The API has no TLS switch: a Kafka source is on TLS when it names the brokers' CA certificate
# (`caCertificate`) or authenticates with an IAM role (`iamRole`, which only TLS carries), and its
# schema registry, when it has one, is an https URL. This policy asks for that.
package main

import rego.v1

deny contains msg if {
	some action in input.actions
	action.action in {"create", "replace", "recreate"}
	kafka := action.after.source.kafka
	not kafka.caCertificate
	not kafka.iamRole
	msg := sprintf("kafka-tls: %s: a Kafka pipe names its brokers' caCertificate or an iamRole (TLS)", [action.name])
}

deny contains msg if {
	some action in input.actions
	action.action in {"create", "replace", "recreate"}
	url := action.after.source.kafka.schemaRegistry.url
	not startswith(url, "https://")
	msg := sprintf("kafka-tls: %s: the schema registry is reached over https, not %s", [action.name, url])
}
