export { type FirmwareHost, firmwareHost } from "./build.ts";
export { makeTestPki, type ServerCert, type TestCa, type TestPki } from "./certs.ts";
export { startTlsProxy, type TlsProxy, type TlsProxyOptions } from "./tls-proxy.ts";
