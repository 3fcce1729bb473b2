/*
 * TLS for the host port with mbedtls: Debian's 2.28 and pico-sdk 2.2.0's 3.6 (the differences are
 * under MBEDTLS_VERSION_NUMBER). Verification is always required: against the configured CA, a key
 * pin (SHA-256 of the leaf's SubjectPublicKeyInfo, checked in the verify callback), or both.
 */
#include "host_tls.h"

#include "host_net.h"
#include "sdk_port.h"
#include "sdk_tls_trust.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

#if MBEDTLS_VERSION_NUMBER >= 0x03000000 && (defined(MBEDTLS_USE_PSA_CRYPTO) || defined(MBEDTLS_SSL_PROTO_TLS1_3))
#include <psa/crypto.h>
#define HOST_TLS_PSA 1
#endif

/* The largest plaintext passed to one mbedtls_ssl_write: a write that must be repeated is kept here. */
#define CHUNK 4096u

static const int ciphersuites[] = {
#if MBEDTLS_VERSION_NUMBER >= 0x03000000 && defined(MBEDTLS_SSL_PROTO_TLS1_3)
    MBEDTLS_TLS1_3_AES_128_GCM_SHA256,
    MBEDTLS_TLS1_3_AES_256_GCM_SHA384,
#if defined(MBEDTLS_CHACHAPOLY_C)
    MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256,
#endif
#endif
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
#if defined(MBEDTLS_CHACHAPOLY_C)
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
#endif
    0};

static struct {
  bool seeded;
  bool active;
  bool want_write;
  int fd;
  sdk_tls_verify_state verify;
  mbedtls_ctr_drbg_context drbg;
  mbedtls_ssl_config conf;
  mbedtls_ssl_context ssl;
  uint8_t pending[CHUNK];
  size_t pending_len;
} tls;

static void log_line(int level, const char *what, const char *detail) {
  char line[512];
  (void)snprintf(line, sizeof line, "%s%s", what, detail);
  sdk_port_log(level, line);
}


bool host_net_set_trust(const uint8_t *ca_der, size_t ca_len, const uint8_t *key_pin32) {
  if (tls.active) {
    sdk_port_log(SDK_LOG_ERROR, "TLS trust not changed: a connection is open");
    return false;
  }
  return sdk_tls_trust_set(ca_der, ca_len, key_pin32);
}

bool host_tls_trusted(void) { return sdk_tls_trust_any(); }

static int entropy(void *context, unsigned char *out, size_t len) {
  (void)context;
  sdk_port_random(out, len);
  return 0;
}

static bool seed(void) {
  if (tls.seeded) return true;
#if defined(HOST_TLS_PSA)
  if (psa_crypto_init() != PSA_SUCCESS) {
    sdk_port_log(SDK_LOG_ERROR, "psa_crypto_init failed");
    return false;
  }
#endif
  static const unsigned char personalization[] = "sdk-firmware-host";
  mbedtls_ctr_drbg_init(&tls.drbg);
  int ret = mbedtls_ctr_drbg_seed(&tls.drbg, entropy, NULL, personalization, sizeof personalization - 1);
  if (ret != 0) {
    sdk_tls_log_error(SDK_LOG_ERROR, "TLS random generator", ret, NULL);
    mbedtls_ctr_drbg_free(&tls.drbg);
    return false;
  }
  tls.seeded = true;
  return true;
}

static int bio_send(void *context, const unsigned char *buf, size_t len) {
  int fd = *(const int *)context;
  ssize_t n = send(fd, buf, len > INT_MAX ? INT_MAX : len, MSG_NOSIGNAL);
  if (n >= 0) return (int)n;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return MBEDTLS_ERR_SSL_WANT_WRITE;
  if (errno == EPIPE || errno == ECONNRESET) return MBEDTLS_ERR_NET_CONN_RESET;
  return MBEDTLS_ERR_NET_SEND_FAILED;
}

static int bio_recv(void *context, unsigned char *buf, size_t len) {
  int fd = *(const int *)context;
  ssize_t n = recv(fd, buf, len > INT_MAX ? INT_MAX : len, 0);
  if (n >= 0) return (int)n;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return MBEDTLS_ERR_SSL_WANT_READ;
  if (errno == ECONNRESET) return MBEDTLS_ERR_NET_CONN_RESET;
  return MBEDTLS_ERR_NET_RECV_FAILED;
}

static bool configure(const char *host) {
  int ret = mbedtls_ssl_config_defaults(&tls.conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                        MBEDTLS_SSL_PRESET_DEFAULT);
  if (ret != 0) {
    sdk_tls_log_error(SDK_LOG_ERROR, "TLS configuration", ret, NULL);
    return false;
  }
  mbedtls_ssl_conf_authmode(&tls.conf, MBEDTLS_SSL_VERIFY_REQUIRED);
  mbedtls_ssl_conf_ca_chain(&tls.conf, sdk_tls_trust_chain(), NULL);
  mbedtls_ssl_conf_verify(&tls.conf, sdk_tls_trust_verify, &tls.verify);
  mbedtls_ssl_conf_rng(&tls.conf, mbedtls_ctr_drbg_random, &tls.drbg);
  mbedtls_ssl_conf_ciphersuites(&tls.conf, ciphersuites);
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
  mbedtls_ssl_conf_min_tls_version(&tls.conf, MBEDTLS_SSL_VERSION_TLS1_2);
#else
  mbedtls_ssl_conf_min_version(&tls.conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
#endif
  ret = mbedtls_ssl_setup(&tls.ssl, &tls.conf);
  if (ret != 0) {
    sdk_tls_log_error(SDK_LOG_ERROR, "TLS session setup", ret, NULL);
    return false;
  }
  ret = mbedtls_ssl_set_hostname(&tls.ssl, host);
  if (ret != 0) {
    sdk_tls_log_error(SDK_LOG_ERROR, "TLS server name", ret, NULL);
    return false;
  }
  mbedtls_ssl_set_bio(&tls.ssl, &tls.fd, bio_send, bio_recv, NULL);
  return true;
}

bool host_tls_begin(int fd, const char *host) {
  if (!host_tls_trusted()) {
    log_line(SDK_LOG_ERROR, "TLS refused (no CA certificate or key pin configured): ", host);
    return false;
  }
  if (!seed()) return false;
  host_tls_end(false);
  mbedtls_ssl_config_init(&tls.conf);
  mbedtls_ssl_init(&tls.ssl);
  tls.active = true;
  tls.fd = fd;
  tls.verify = (sdk_tls_verify_state){.clock_known = NULL};
  if (!configure(host)) {
    host_tls_end(false);
    return false;
  }
  return true;
}

static void log_handshake_failure(int ret) {
  char why[400];
  why[0] = '\0';
  if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
    sdk_tls_trust_describe(&tls.verify, mbedtls_ssl_get_verify_result(&tls.ssl), why, sizeof why);
  }
  sdk_tls_log_error(SDK_LOG_ERROR, "TLS handshake failed", ret, why);
}

host_tls_result host_tls_handshake(void) {
  if (!tls.active) return HOST_TLS_FAILED;
  int ret = mbedtls_ssl_handshake(&tls.ssl);
  tls.want_write = ret == MBEDTLS_ERR_SSL_WANT_WRITE;
  if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE) return HOST_TLS_AGAIN;
  if (ret != 0) {
    log_handshake_failure(ret);
    return HOST_TLS_FAILED;
  }
  char line[160];
  (void)snprintf(line, sizeof line, "TLS: %s, %s", mbedtls_ssl_get_version(&tls.ssl),
                 mbedtls_ssl_get_ciphersuite(&tls.ssl));
  sdk_port_log(SDK_LOG_INFO, line);
  return HOST_TLS_DONE;
}

static bool would_block(int ret) { return ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE; }

/* mbedtls wants a write that returned WANT_* repeated with the same arguments: the plaintext was
 * already taken into a record (so we reported it sent), and this repeats the call until it is out. */
bool host_tls_flush(void) {
  if (!tls.active) return false;
  if (tls.pending_len == 0) return true;
  int ret = mbedtls_ssl_write(&tls.ssl, tls.pending, tls.pending_len);
  if (ret >= 0) {
    tls.pending_len = 0;
    tls.want_write = false;
    return true;
  }
  if (would_block(ret)) {
    tls.want_write = ret == MBEDTLS_ERR_SSL_WANT_WRITE;
    return true;
  }
  sdk_tls_log_error(SDK_LOG_WARN, "TLS send", ret, NULL);
  return false;
}

long host_tls_send(const uint8_t *data, size_t len) {
  if (!host_tls_flush()) return -1;
  if (tls.pending_len > 0 || len == 0) return 0;
  size_t chunk = len < CHUNK ? len : CHUNK;
  int record = mbedtls_ssl_get_max_out_record_payload(&tls.ssl);
  if (record < 0) {
    sdk_tls_log_error(SDK_LOG_WARN, "TLS record size", record, NULL);
    return -1;
  }
  if ((size_t)record < chunk) chunk = (size_t)record;
  int ret = mbedtls_ssl_write(&tls.ssl, data, chunk);
  if (ret >= 0) {
    tls.want_write = false;
    return ret;
  }
  if (would_block(ret)) {
    memcpy(tls.pending, data, chunk);
    tls.pending_len = chunk;
    tls.want_write = ret == MBEDTLS_ERR_SSL_WANT_WRITE;
    return (long)chunk;
  }
  sdk_tls_log_error(SDK_LOG_WARN, "TLS send", ret, NULL);
  return -1;
}

long host_tls_recv(uint8_t *out, size_t cap) {
  if (!host_tls_flush()) return -1;
  if (cap == 0) return 0;
  int ret = mbedtls_ssl_read(&tls.ssl, out, cap > INT_MAX ? INT_MAX : cap);
  if (ret > 0) return ret;
  if (ret == 0 || ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
    sdk_port_log(SDK_LOG_INFO, "TLS: the server closed the connection");
    return -1;
  }
  if (ret == MBEDTLS_ERR_SSL_WANT_READ) return 0;
  if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
    tls.want_write = true;
    return 0;
  }
#if defined(MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET)
  if (ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) return 0;
#endif
  sdk_tls_log_error(SDK_LOG_WARN, "TLS receive", ret, NULL);
  return -1;
}

bool host_tls_wants_write(void) { return tls.active && (tls.want_write || tls.pending_len > 0); }

bool host_tls_has_buffered_input(void) { return tls.active && mbedtls_ssl_check_pending(&tls.ssl) != 0; }

void host_tls_end(bool graceful) {
  if (!tls.active) return;
  if (graceful && host_tls_flush() && tls.pending_len == 0) {
    /* Best effort on a non-blocking socket: the socket is closed next either way. */
    (void)mbedtls_ssl_close_notify(&tls.ssl);
  }
  mbedtls_ssl_free(&tls.ssl);
  mbedtls_ssl_config_free(&tls.conf);
  tls.active = false;
  tls.want_write = false;
  tls.verify.pin_mismatch = false;
  tls.pending_len = 0;
  tls.fd = -1;
}
