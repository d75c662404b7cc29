package v1

// File is one file mounted into the main container, and into the sidecars
// it names, at path. Its content is given inline (content or
// binaryContent), or taken from a key of a ConfigMap or a Secret. Inline
// content lives in a ConfigMap the controller makes, immutable and named
// by a hash of the content, so a change of it is a change of the pod
// template: the pods roll at once, as for any spec change, and a
// Deployment rollback finds its files. A key of a ConfigMap or Secret
// joins the configuration hash, as a key of env does: a change of that
// key rolls the pods (under --max-concurrent-config-rollouts), a change of
// another key does not. Files are mounted one by one (subPath), so the
// other files of their directory in the image stay visible; they are not
// updated in a running pod, which is why a change rolls it.
//
// +kubebuilder:validation:XValidation:rule="[has(self.content), has(self.binaryContent), has(self.configMapKeyRef), has(self.secretKeyRef)].filter(x, x).size() == 1",message="a file takes its content from exactly one of content, binaryContent, configMapKeyRef and secretKeyRef"
type File struct {
	// path is where the file appears in the containers: an absolute path
	// of at most 1024 characters, its segments made of letters, digits,
	// '-', '_' and '.', none of them '.' or '..', the file's name at most
	// 250 characters. Each path may be used
	// once, and not as the mountPath of a volumeMount.
	// +required
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^(/[-._a-zA-Z0-9]+)*/[-._a-zA-Z0-9]{1,250}$`
	// +kubebuilder:validation:XValidation:rule="!self.split('/').exists(s, s == '.' || s == '..')",message="path segments may not be '.' or '..'"
	Path string `json:"path"`

	// mode is the file's permission bits, 0 to 0777 (511 in decimal; YAML
	// takes 0640 as octal); 0644 when unset. The file belongs to root,
	// or to the pod's fsGroup when podSecurityContext sets one.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=511
	Mode *int32 `json:"mode,omitempty"`

	// content is the file's text, inline: at most 262,144 characters, and
	// the inline contents of all files together at most 1,000,000 bytes in
	// UTF-8 (a ConfigMap holds at most 1 MiB). Keys and certificates do not belong here: content
	// holding a PEM private key is refused; use secretKeyRef.
	// +optional
	// +kubebuilder:validation:MaxLength=262144
	// +kubebuilder:validation:XValidation:rule="!self.contains('PRIVATE KEY-----')",message="content holds a private key: a DeployObject is not a Secret (anyone who may read it may read its content); put the key in a Secret and use secretKeyRef"
	Content *string `json:"content,omitempty"`

	// binaryContent is the file's bytes, inline, base64-encoded in YAML
	// and JSON: at most 262,144 bytes, counted with content against the
	// 1,000,000-byte limit.
	// +optional
	// +kubebuilder:validation:MaxLength=349528
	// +kubebuilder:validation:XValidation:rule="size(self) <= 262144",message="binaryContent may hold at most 262,144 bytes"
	BinaryContent []byte `json:"binaryContent,omitempty"`

	// configMapKeyRef takes the file from a key of a ConfigMap in the
	// namespace.
	// +optional
	ConfigMapKeyRef *FileKeyRef `json:"configMapKeyRef,omitempty"`

	// secretKeyRef takes the file from a key of a Secret in the
	// namespace. The controller never reads the value (with
	// --track-secrets it keeps a hash of it, to roll the pods when it
	// changes); the kubelet mounts the Secret itself.
	// +optional
	SecretKeyRef *FileKeyRef `json:"secretKeyRef,omitempty"`

	// sidecars are the names of sidecars that mount the file too, at the
	// same path; at most 8.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	Sidecars []string `json:"sidecars,omitempty"`
}

// FileKeyRef names a key of a ConfigMap or Secret in the DeployObject's
// namespace.
type FileKeyRef struct {
	// name is the ConfigMap's or Secret's name, a DNS subdomain.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// key is the key whose value is the file: letters, digits, '-', '_'
	// and '.', at most 253 characters.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..' && !self.startsWith('..')",message="key may not be '.' or '..', or start with '..'"
	Key string `json:"key"`

	// optional lets the pods start without the ConfigMap or Secret, or the
	// key; the file is then missing. Otherwise Ready says ConfigMissing
	// and the Deployment waits for it.
	// +optional
	Optional *bool `json:"optional,omitempty"`
}
