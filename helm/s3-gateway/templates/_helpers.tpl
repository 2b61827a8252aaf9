{{/* Names and labels. */}}
{{- define "s3-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "s3-gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The gateway pods; the component keeps the `helm test` pod out of the Service, PDB and NetworkPolicy. */}}
{{- define "s3-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "s3-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: gateway
{{- end -}}

{{- define "s3-gateway.commonLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "s3-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "s3-gateway.labels" -}}
{{ include "s3-gateway.commonLabels" . }}
app.kubernetes.io/component: gateway
{{- end -}}

{{- define "s3-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "s3-gateway.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "s3-gateway.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "s3-gateway.credentialsSecret" -}}
{{- default (printf "%s-credentials" (include "s3-gateway.fullname" .)) .Values.credentials.existingSecret -}}
{{- end -}}

{{/*
The data of the chart-made credentials Secret, as JSON (values base64).
*/}}
{{- define "s3-gateway.credentialsData" -}}
{{- $keys := .Values.credentials.secretKeys }}
{{- $accessKey := .Values.credentials.rootAccessKey }}
{{- $secretKey := .Values.credentials.rootSecretKey }}
{{- if not $accessKey }}
{{- /* Generated once, then kept: an upgrade must not change the root key under running clients. */}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "s3-gateway.credentialsSecret" .) }}
{{- if and $existing (hasKey $existing.data $keys.rootAccessKey) (hasKey $existing.data $keys.rootSecretKey) }}
{{- $accessKey = index $existing.data $keys.rootAccessKey | b64dec }}
{{- $secretKey = index $existing.data $keys.rootSecretKey | b64dec }}
{{- else }}
{{- $accessKey = printf "S3GW%s" (randAlphaNum 16 | upper) }}
{{- $secretKey = randAlphaNum 40 }}
{{- end }}
{{- end }}
{{- $data := dict $keys.rootAccessKey ($accessKey | b64enc) $keys.rootSecretKey ($secretKey | b64enc) }}
{{- with .Values.credentials.keys }}
{{- $_ := set $data $keys.keysFile (toToml (dict "keys" .) | b64enc) }}
{{- end }}
{{- toJson $data }}
{{- end -}}

{{/*
The annotation, on the chart-made Secret and on the pods, that rolls the
pods when the credentials change: the release revision at which the
Secret's data last changed. It is carried over from the Secret in the
cluster while its data stays the same, so an upgrade that changes nothing
else rolls nothing. It is no function of the credentials, unlike a digest
of them, which anyone who may read pods could test guessed secrets against
offline.
*/}}
{{- define "s3-gateway.credentialsRevisionAnnotation" -}}s3-gateway/credentials-revision{{- end -}}

{{- define "s3-gateway.credentialsRevision" -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "s3-gateway.credentialsSecret" .) }}
{{- $kept := "" }}
{{- if $existing }}
{{- $kept = dig "metadata" "annotations" (include "s3-gateway.credentialsRevisionAnnotation" .) "" $existing }}
{{- end }}
{{- if and $kept (eq (toJson ($existing.data | default dict)) (include "s3-gateway.credentialsData" .)) }}
{{- $kept }}
{{- else }}
{{- .Release.Revision }}
{{- end }}
{{- end -}}

{{/* Whether a `[[keys]]` file is mounted and named in gateway.toml. */}}
{{- define "s3-gateway.hasKeysFile" -}}
{{- if .Values.credentials.existingSecret -}}
{{- if .Values.credentials.existingSecretHasKeysFile }}true{{ end -}}
{{- else if .Values.credentials.keys -}}
true
{{- end -}}
{{- end -}}

{{- define "s3-gateway.scheme" -}}
{{- if .Values.tls.enabled }}HTTPS{{ else }}HTTP{{ end -}}
{{- end -}}

{{/* Where things live in the pod; the image's root filesystem is read-only. */}}
{{- define "s3-gateway.configDir" -}}/etc/s3-gateway/config{{- end -}}
{{- define "s3-gateway.credentialsDir" -}}/etc/s3-gateway/credentials{{- end -}}
{{- define "s3-gateway.tlsDir" -}}/etc/s3-gateway/tls{{- end -}}
{{- define "s3-gateway.recordsKeyDir" -}}/etc/s3-gateway/records{{- end -}}
{{- define "s3-gateway.sseMasterKeyDir" -}}/etc/s3-gateway/sse{{- end -}}

{{- define "s3-gateway.recordsKeySecret" -}}
{{- default (printf "%s-records-key" (include "s3-gateway.fullname" .)) .Values.ozone.recordsKey.existingSecret -}}
{{- end -}}
{{- define "s3-gateway.dataDir" -}}/data{{- end -}}

{{/*
The gateway's TOML configuration: the settings the chart owns, then every
non-empty `config` value under its own TOML key.
*/}}
{{- define "s3-gateway.gatewayToml" -}}
{{- $address := .Values.listenAddress -}}
{{- if contains ":" $address -}}
{{- $address = printf "[%s]" $address -}}
{{- end -}}
{{- $settings := dict "listen" (printf "%s:%d" $address (int .Values.containerPort)) "backend" .Values.backend "data_dir" (include "s3-gateway.dataDir" .) -}}
{{- if eq .Values.backend "ozone" -}}
{{- $_ := set $settings "om" .Values.ozone.om -}}
{{- $_ := set $settings "ozone_records_key_file" (printf "%s/%s" (include "s3-gateway.recordsKeyDir" .) .Values.ozone.recordsKey.secretKey) -}}
{{- end -}}
{{- if include "s3-gateway.hasKeysFile" . -}}
{{- $_ := set $settings "credentials" (printf "%s/%s" (include "s3-gateway.credentialsDir" .) .Values.credentials.secretKeys.keysFile) -}}
{{- end -}}
{{- if .Values.sseMasterKey.existingSecret -}}
{{- $_ := set $settings "sse_master_key_file" (printf "%s/%s" (include "s3-gateway.sseMasterKeyDir" .) .Values.sseMasterKey.secretKey) -}}
{{- end -}}
{{- if .Values.tls.enabled -}}
{{- $_ := set $settings "tls_cert" (printf "%s/tls.crt" (include "s3-gateway.tlsDir" .)) -}}
{{- $_ := set $settings "tls_key" (printf "%s/tls.key" (include "s3-gateway.tlsDir" .)) -}}
{{- end -}}
{{- range $key, $value := .Values.config -}}
{{- if ne (toString $value) "" -}}
{{- /* A number from a values file arrives as a float (8192 would render 8192.0, which
       the gateway refuses); the schema allows only whole numbers. */ -}}
{{- if kindIs "float64" $value -}}
{{- $value = int64 $value -}}
{{- end -}}
{{- $_ := set $settings $key $value -}}
{{- end -}}
{{- end -}}
{{- toToml $settings -}}
{{- end -}}

{{/* Combinations the schema cannot express, refused with a message that says what to do. */}}
{{- define "s3-gateway.validate" -}}
{{- $embedded := eq .Values.backend "embedded" -}}
{{- if $embedded -}}
{{- if gt (int .Values.replicaCount) 1 -}}
{{- fail (printf "backend embedded keeps its store on one volume and runs exactly one replica, but replicaCount is %d: set replicaCount to 1, or use backend ozone for several replicas" (int .Values.replicaCount)) -}}
{{- end -}}
{{- if .Values.autoscaling.enabled -}}
{{- fail "autoscaling needs backend ozone: the embedded store runs exactly one replica" -}}
{{- end -}}
{{- if .Values.podDisruptionBudget.enabled -}}
{{- fail "podDisruptionBudget needs backend ozone: a budget for the single embedded replica would block every node drain" -}}
{{- end -}}
{{- if .Values.ozone.om -}}
{{- fail "ozone.om is set but backend is embedded: set backend: ozone" -}}
{{- end -}}
{{- range $key := list "ozone_blocks_in_flight" "ozone_chunks_in_flight" "ozone_connect_timeout" "ozone_request_timeout" "ozone_system_secret_file" "ozone_tls_ca_file" "ozone_tls_server_name" "ozone_user_secrets" -}}
{{- if ne (toString (index $.Values.config $key)) "" -}}
{{- fail (printf "config.%s is read only by backend ozone" $key) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- if not .Values.ozone.om -}}
{{- fail "backend ozone needs the Ozone Managers' gRPC addresses: set ozone.om, e.g. [om-0.om:8981, om-1.om:8981, om-2.om:8981]" -}}
{{- end -}}
{{- range $key := list "read_buffer" "small_block_max" "object_with_key_max" "metadata_db_cache" "small_block_db_cache" "multipart_upload_expiry" "open_key_expiry" "reclaim_interval" "reclaim_grace" -}}
{{- if ne (toString (index $.Values.config $key)) "" -}}
{{- fail (printf "config.%s is read only by backend embedded" $key) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- with .Values.credentials -}}
{{- if and .existingSecret (or .keys .rootAccessKey .rootSecretKey) -}}
{{- fail "credentials.existingSecret is set: keys, rootAccessKey and rootSecretKey then belong in that Secret, not in values" -}}
{{- end -}}
{{- if and (not .existingSecret) .existingSecretHasKeysFile -}}
{{- fail "credentials.existingSecretHasKeysFile needs credentials.existingSecret" -}}
{{- end -}}
{{- if ne (empty .rootAccessKey) (empty .rootSecretKey) -}}
{{- fail "credentials.rootAccessKey and credentials.rootSecretKey must be set together (or both left empty to generate a root key)" -}}
{{- end -}}
{{- $seen := dict -}}
{{- range $key := .keys -}}
{{- range $field := list "name" "access_key" -}}
{{- $value := printf "%s=%s" $field (index $key $field) -}}
{{- if hasKey $seen $value -}}
{{- fail (printf "credentials.keys: two keys have the %s %s, which the gateway refuses" $field (index $key $field)) -}}
{{- end -}}
{{- $_ := set $seen $value true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) -}}
{{- fail "tls.enabled needs tls.secretName: a kubernetes.io/tls Secret with tls.crt and tls.key" -}}
{{- end -}}
{{- if and .Values.podDisruptionBudget.enabled (not (kindIs "invalid" .Values.podDisruptionBudget.minAvailable)) (not (kindIs "invalid" .Values.podDisruptionBudget.maxUnavailable)) -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both" -}}
{{- end -}}
{{- if and .Values.podDisruptionBudget.enabled (kindIs "invalid" .Values.podDisruptionBudget.minAvailable) (kindIs "invalid" .Values.podDisruptionBudget.maxUnavailable) -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable" -}}
{{- end -}}
{{- if and .Values.autoscaling.enabled (kindIs "invalid" .Values.autoscaling.targetCPUUtilizationPercentage) (kindIs "invalid" .Values.autoscaling.targetMemoryUtilizationPercentage) -}}
{{- fail "autoscaling needs targetCPUUtilizationPercentage or targetMemoryUtilizationPercentage" -}}
{{- end -}}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) -}}
{{- fail "autoscaling.minReplicas is larger than autoscaling.maxReplicas" -}}
{{- end -}}
{{- if le (int .Values.terminationGracePeriodSeconds) (int .Values.preStopSleepSeconds) -}}
{{- fail "terminationGracePeriodSeconds must be longer than preStopSleepSeconds, or in-flight requests are killed before they finish" -}}
{{- end -}}
{{- end -}}
