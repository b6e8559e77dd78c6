/** Sent as `libraryVersion` in every report; kept equal to package.json's version (a test checks). */
export const LIBRARY_VERSION = "0.2.0";
