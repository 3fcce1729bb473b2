/*
 * TLS trust for both ports (host_tls.c, pico_tls.c), on mbedtls 2.28 or 3.6: the server is
 * trusted through the configured CA certificate (DER), a key pin (SHA-256 of the leaf
 * certificate's SubjectPublicKeyInfo), or both. Verification is always required; with only a pin,
 * the chain need not reach a CA but the leaf's key must match.
 */
#ifndef SDK_TLS_TRUST_H
#define SDK_TLS_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/x509_crt.h>

#define SDK_TLS_PIN_LEN 32u

/* One handshake's view of the verification (the p_vrfy of sdk_tls_trust_verify). */
typedef struct {
  /* NULL when the wall clock is always right (host); else asked during verification: while it
   * answers false, "not yet valid" and "expired" are not held against the chain. */
  bool (*clock_known)(void);
  bool pin_mismatch; /* set by the callback: the leaf's key is not the pinned one */
  bool dates_skipped; /* set by the callback: date flags were cleared because the clock is unknown */
} sdk_tls_verify_state;

/* Replaces the trust (ca_der NULL or ca_len 0: no CA; key_pin32 NULL: no pin). false, with a log
 * line, when the CA does not parse (then no CA is kept). */
bool sdk_tls_trust_set(const uint8_t *ca_der, size_t ca_len, const uint8_t *key_pin32);
/* Whether any trust is configured: without it wss:// is refused. */
bool sdk_tls_trust_any(void);
/* The chain to give mbedtls: the CA, or (only a pin) an empty certificate nothing chains to, since
 * VERIFY_REQUIRED refuses a missing chain. */
mbedtls_x509_crt *sdk_tls_trust_chain(void);
/* The mbedtls verify callback (mbedtls_ssl_conf_verify / mbedtls_ssl_set_verify); state is an
 * sdk_tls_verify_state. */
int sdk_tls_trust_verify(void *state, mbedtls_x509_crt *crt, int depth, uint32_t *flags);
/* A log text for a failed verification: "the server key does not match the pin; ..." */
void sdk_tls_trust_describe(const sdk_tls_verify_state *state, uint32_t flags, char *out, size_t cap);

/* One log line for an mbedtls error: "what: reason (-0x2700)" and, when given, ": detail". */
void sdk_tls_log_error(int level, const char *what, int ret, const char *detail);

#endif /* SDK_TLS_TRUST_H */
