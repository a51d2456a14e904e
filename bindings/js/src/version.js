// The package's version (package.json's "version"; test/package.test.js keeps the two
// equal). Sessions report it to brokers as ApiVersions' clientSoftwareVersion.
export const VERSION = '0.1.0';

/** The client software a session reports in ApiVersions unless told otherwise. */
export const CLIENT_SOFTWARE_NAME = 'kwire-js';
