package codec

// Version is the version of this release of kwire. codec/session reports it to brokers as
// ApiVersions' clientSoftwareVersion unless told otherwise. The bindings under bindings/
// are released together with the Go module, at the same version.
const Version = "0.1.0"
