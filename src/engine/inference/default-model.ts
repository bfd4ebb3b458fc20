// The model every face uses when none is named: the library's createRemover(), the CLI's
// --model and the service's MODEL. A manifest name (models/manifest.json); the package
// tarball and the container image carry this model ready-made. docs/MODEL.md says why it
// is this one.
export const DEFAULT_MODEL = "int8-static";
