{{/* The pod template both workloads share: the Deployment (ozone) and the StatefulSet (embedded). */}}
{{- define "s3-gateway.podTemplate" -}}
metadata:
  labels:
    {{- include "s3-gateway.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    {{- if .Values.rollOnConfigChange }}
    checksum/config: {{ include "s3-gateway.gatewayToml" . | sha256sum }}
    {{- if not .Values.credentials.existingSecret }}
    {{ include "s3-gateway.credentialsRevisionAnnotation" . }}: {{ include "s3-gateway.credentialsRevision" . | quote }}
    {{- end }}
    {{- end }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "s3-gateway.serviceAccountName" . }}
  automountServiceAccountToken: {{ .Values.serviceAccount.automountServiceAccountToken }}
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  containers:
    - name: s3-gateway
      image: {{ include "s3-gateway.image" . | quote }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - --config
        - {{ include "s3-gateway.configDir" . }}/gateway.toml
      env:
        - name: S3GW_ROOT_ACCESS_KEY
          valueFrom:
            secretKeyRef:
              name: {{ include "s3-gateway.credentialsSecret" . }}
              key: {{ .Values.credentials.secretKeys.rootAccessKey }}
        - name: S3GW_ROOT_SECRET_KEY
          valueFrom:
            secretKeyRef:
              name: {{ include "s3-gateway.credentialsSecret" . }}
              key: {{ .Values.credentials.secretKeys.rootSecretKey }}
        {{- with .Values.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with .Values.extraEnvFrom }}
      envFrom:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - name: s3
          containerPort: {{ .Values.containerPort }}
          protocol: TCP
      startupProbe:
        httpGet:
          path: /health
          port: s3
          scheme: {{ include "s3-gateway.scheme" . }}
        {{- toYaml .Values.probes.startup | nindent 8 }}
      livenessProbe:
        httpGet:
          path: /health
          port: s3
          scheme: {{ include "s3-gateway.scheme" . }}
        {{- toYaml .Values.probes.liveness | nindent 8 }}
      readinessProbe:
        httpGet:
          path: /ready
          port: s3
          scheme: {{ include "s3-gateway.scheme" . }}
        {{- toYaml .Values.probes.readiness | nindent 8 }}
      {{- if and (gt (int .Values.preStopSleepSeconds) 0) (semverCompare ">=1.30-0" .Capabilities.KubeVersion.Version) }}
      lifecycle:
        preStop:
          sleep:
            seconds: {{ .Values.preStopSleepSeconds }}
      {{- end }}
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: config
          mountPath: {{ include "s3-gateway.configDir" . }}
          readOnly: true
        - name: data
          mountPath: {{ include "s3-gateway.dataDir" . }}
        {{- if include "s3-gateway.hasKeysFile" . }}
        - name: credentials
          mountPath: {{ include "s3-gateway.credentialsDir" . }}
          readOnly: true
        {{- end }}
        {{- if .Values.tls.enabled }}
        - name: tls
          mountPath: {{ include "s3-gateway.tlsDir" . }}
          readOnly: true
        {{- end }}
        {{- if eq .Values.backend "ozone" }}
        - name: records-key
          mountPath: {{ include "s3-gateway.recordsKeyDir" . }}
          readOnly: true
        {{- end }}
        {{- if .Values.sseMasterKey.existingSecret }}
        - name: sse-master-key
          mountPath: {{ include "s3-gateway.sseMasterKeyDir" . }}
          readOnly: true
        {{- end }}
        {{- with .Values.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: config
      configMap:
        name: {{ include "s3-gateway.fullname" . }}
    {{- if include "s3-gateway.hasKeysFile" . }}
    - name: credentials
      secret:
        secretName: {{ include "s3-gateway.credentialsSecret" . }}
        # Group-readable: the files belong to root and the pod's fsGroup.
        defaultMode: 0440
        items:
          - key: {{ .Values.credentials.secretKeys.keysFile }}
            path: {{ .Values.credentials.secretKeys.keysFile }}
    {{- end }}
    {{- if .Values.tls.enabled }}
    - name: tls
      secret:
        secretName: {{ .Values.tls.secretName }}
        defaultMode: 0440
        items:
          - key: tls.crt
            path: tls.crt
          - key: tls.key
            path: tls.key
    {{- end }}
    {{- if .Values.sseMasterKey.existingSecret }}
    - name: sse-master-key
      secret:
        secretName: {{ .Values.sseMasterKey.existingSecret }}
        # root:fsGroup 0440, which the gateway accepts for a secret file
        # (owner-only otherwise; docs/security.md).
        defaultMode: 0440
        items:
          - key: {{ .Values.sseMasterKey.secretKey }}
            path: {{ .Values.sseMasterKey.secretKey }}
    {{- end }}
    {{- if eq .Values.backend "ozone" }}
    - name: records-key
      secret:
        secretName: {{ include "s3-gateway.recordsKeySecret" . }}
        # root:fsGroup 0440, which the gateway accepts for this file
        # (owner-only otherwise; docs/security.md).
        defaultMode: 0440
        items:
          - key: {{ .Values.ozone.recordsKey.secretKey }}
            path: {{ .Values.ozone.recordsKey.secretKey }}
    # On Ozone nothing is stored here; a writable directory keeps the
    # root filesystem read-only.
    - name: data
      emptyDir:
        sizeLimit: 16Mi
    {{- else if .Values.persistence.existingClaim }}
    - name: data
      persistentVolumeClaim:
        claimName: {{ .Values.persistence.existingClaim }}
    {{- else if not .Values.persistence.enabled }}
    - name: data
      emptyDir: {}
    {{- end }}
    {{- with .Values.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- range . }}
    - {{- if hasKey . "labelSelector" }}
      {{- toYaml . | nindent 6 }}
      {{- else }}
      {{- toYaml (merge (dict "labelSelector" (dict "matchLabels" (include "s3-gateway.selectorLabels" $ | fromYaml))) .) | nindent 6 }}
      {{- end }}
    {{- end }}
  {{- end }}
{{- end -}}
