/* TLS trust shared by the host and Pico ports (sdk_tls_trust.h). */
#include "sdk_tls_trust.h"

#include "sdk_port.h"

#include <stdio.h>
#include <string.h>

#include <mbedtls/error.h>
#include <mbedtls/sha256.h>
#include <mbedtls/version.h>

static struct {
  bool ready;
  bool has_ca;
  bool has_pin;
  mbedtls_x509_crt ca;
  mbedtls_x509_crt none;
  uint8_t pin[SDK_TLS_PIN_LEN];
} trust;

static void init_once(void) {
  if (trust.ready) return;
  mbedtls_x509_crt_init(&trust.ca);
  mbedtls_x509_crt_init(&trust.none);
  trust.ready = true;
}

void sdk_tls_log_error(int level, const char *what, int ret, const char *detail) {
  char reason[160];
#if defined(MBEDTLS_ERROR_C)
  mbedtls_strerror(ret, reason, sizeof reason);
#else
  reason[0] = '\0'; /* the Pico build leaves the error strings out (flash) */
#endif
  char line[640];
  (void)snprintf(line, sizeof line, "%s: %s (-0x%04x)%s%s", what, reason, (unsigned)-ret,
                 detail && *detail ? ": " : "", detail ? detail : "");
  sdk_port_log(level, line);
}

bool sdk_tls_trust_set(const uint8_t *ca_der, size_t ca_len, const uint8_t *key_pin32) {
  init_once();
  mbedtls_x509_crt_free(&trust.ca);
  mbedtls_x509_crt_init(&trust.ca);
  trust.has_ca = false;
  trust.has_pin = false;
  if (ca_der != NULL && ca_len > 0) {
    int ret = mbedtls_x509_crt_parse_der(&trust.ca, ca_der, ca_len);
    if (ret != 0) {
      /* A CA that does not parse leaves no trust at all (not even the pin): the configuration is wrong. */
      sdk_tls_log_error(SDK_LOG_ERROR, "the CA certificate does not parse", ret, NULL);
      mbedtls_x509_crt_free(&trust.ca);
      mbedtls_x509_crt_init(&trust.ca);
      return false;
    }
    trust.has_ca = true;
  }
  if (key_pin32 != NULL) {
    memcpy(trust.pin, key_pin32, SDK_TLS_PIN_LEN);
    trust.has_pin = true;
  }
  return true;
}

bool sdk_tls_trust_any(void) { return trust.has_ca || trust.has_pin; }

mbedtls_x509_crt *sdk_tls_trust_chain(void) {
  init_once();
  return trust.has_ca ? &trust.ca : &trust.none;
}

static int sha256(const unsigned char *data, size_t len, unsigned char out[32]) {
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
  return mbedtls_sha256(data, len, out, 0);
#else
  return mbedtls_sha256_ret(data, len, out, 0);
#endif
}

int sdk_tls_trust_verify(void *state, mbedtls_x509_crt *crt, int depth, uint32_t *flags) {
  sdk_tls_verify_state *s = state;
  if (!trust.has_ca) *flags &= ~(uint32_t)MBEDTLS_X509_BADCERT_NOT_TRUSTED;
  if (s != NULL && s->clock_known != NULL && !s->clock_known()) {
    uint32_t dates = (uint32_t)(MBEDTLS_X509_BADCERT_FUTURE | MBEDTLS_X509_BADCERT_EXPIRED);
    if ((*flags & dates) != 0) s->dates_skipped = true;
    *flags &= ~dates;
  }
  if (depth == 0 && trust.has_pin) {
    unsigned char digest[SDK_TLS_PIN_LEN];
    if (sha256(crt->pk_raw.p, crt->pk_raw.len, digest) != 0 || memcmp(digest, trust.pin, SDK_TLS_PIN_LEN) != 0) {
      *flags |= MBEDTLS_X509_BADCERT_OTHER;
      if (s != NULL) s->pin_mismatch = true;
    }
  }
  return 0;
}

void sdk_tls_trust_describe(const sdk_tls_verify_state *state, uint32_t flags, char *out, size_t cap) {
  if (cap == 0) return;
#if !defined(MBEDTLS_X509_REMOVE_INFO)
  char info[320];
  int n = mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
  if (n < 0) n = 0;
  while (n > 0 && info[n - 1] == '\n') info[--n] = '\0';
  for (char *c = info; *c != '\0'; c++)
    if (*c == '\n') *c = ';';
#else
  char info[32];
  (void)snprintf(info, sizeof info, "flags 0x%08x", (unsigned)flags);
#endif
  (void)snprintf(out, cap, "%s%s", state != NULL && state->pin_mismatch ? "the server key does not match the pin; " : "",
                 info);
}
