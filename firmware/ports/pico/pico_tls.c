/*
 * TLS for the Pico port: one altcp_tls config made at boot (lwIP's altcp_tls_mbedtls as patched by
 * pico-sdk; ALTCP_MBEDTLS_AUTHMODE is VERIFY_REQUIRED), trust from the config block
 * (ports/common/sdk_tls_trust.c, the same rules as the host port), set on each connection: the
 * server name (SNI and the name check), the CA chain and the verify callback.
 */
#include <stdio.h>
#include <string.h>

#include "lwip/altcp_tls.h"
#include "mbedtls/error.h"
#include "mbedtls/ssl.h"
#include "pico_net_parts.h"
#include "pico_port.h"
#include "psa/crypto.h"
#include "sdk_port.h"
#include "sdk_tls_trust.h"

static struct altcp_tls_config *tls_config;
static bool trusted;
/* One connection at a time: its verification state. */
static sdk_tls_verify_state verify_state;

bool pico_tls_init(const sdk_config *config) {
  pico_clock_attach_mbedtls();
  /* TLS 1.3 in mbedtls 3.6 runs its key exchange and key schedule through PSA. */
  psa_status_t psa = psa_crypto_init();
  if (psa != PSA_SUCCESS) {
    char line[64];
    snprintf(line, sizeof line, "psa_crypto_init failed (%d): wss:// is unavailable", (int)psa);
    sdk_port_log(SDK_LOG_ERROR, line);
    return false;
  }
  bool parsed = sdk_tls_trust_set(config->ca_der, config->ca_der_len, config->has_key_pin ? config->key_pin : NULL);
  trusted = sdk_tls_trust_any();
  if (!trusted) return parsed;
  tls_config = altcp_tls_create_config_client(NULL, 0);
  if (tls_config == NULL) {
    sdk_port_log(SDK_LOG_ERROR, "the TLS configuration could not be made (out of memory?): wss:// is unavailable");
    trusted = false;
  }
  return parsed;
}

bool pico_tls_trusted(void) { return trusted && tls_config != NULL; }


struct altcp_pcb *pico_tls_new(const char *host) {
  if (!pico_tls_trusted()) return NULL;
  struct altcp_pcb *pcb = altcp_tls_new(tls_config, IPADDR_TYPE_V4);
  if (pcb == NULL) {
    sdk_port_log(SDK_LOG_ERROR, "TLS: no memory for a connection");
    return NULL;
  }
  mbedtls_ssl_context *ssl = altcp_tls_context(pcb);
  int ret = mbedtls_ssl_set_hostname(ssl, host);
  if (ret != 0) {
    sdk_tls_log_error(SDK_LOG_ERROR, "TLS server name", ret, NULL);
    altcp_abort(pcb);
    return NULL;
  }
  /* Verification is required here too, not only through the build's ALTCP_MBEDTLS_AUTHMODE
     (lwIP's own default would make it optional). */
  mbedtls_ssl_set_hs_authmode(ssl, MBEDTLS_SSL_VERIFY_REQUIRED);
  /* The per-handshake chain (read by mbedtls_ssl_verify_certificate before the config's). */
  mbedtls_ssl_set_hs_ca_chain(ssl, sdk_tls_trust_chain(), NULL);
  verify_state = (sdk_tls_verify_state){.clock_known = pico_clock_known};
  mbedtls_ssl_set_verify(ssl, sdk_tls_trust_verify, &verify_state);
  return pcb;
}

bool pico_tls_verified(struct altcp_pcb *pcb) {
  mbedtls_ssl_context *ssl = altcp_tls_context(pcb);
  return ssl != NULL && mbedtls_ssl_get_verify_result(ssl) == 0;
}

uint16_t pico_tls_max_write(struct altcp_pcb *pcb) {
  mbedtls_ssl_context *ssl = altcp_tls_context(pcb);
  int max = ssl != NULL ? mbedtls_ssl_get_max_out_record_payload(ssl) : 0;
  if (max <= 0) return 0;
  return max > 0xFFFF ? 0xFFFF : (uint16_t)max;
}

void pico_tls_log_failure(struct altcp_pcb *pcb, const char *host) {
  mbedtls_ssl_context *ssl = pcb != NULL ? altcp_tls_context(pcb) : NULL;
  uint32_t flags = ssl != NULL ? mbedtls_ssl_get_verify_result(ssl) : 0xFFFFFFFFu;
  char why[400];
  if (flags != 0 && flags != 0xFFFFFFFFu) {
    sdk_tls_trust_describe(&verify_state, flags, why, sizeof why);
  } else {
    snprintf(why, sizeof why, "%s", flags == 0 ? "the certificate was accepted, then the handshake failed"
                                               : "no certificate was checked (no common TLS version, cipher suite or group, or the server closed)");
  }
  char line[560];
  snprintf(line, sizeof line, "TLS handshake with %s failed: %s", host, why);
  sdk_port_log(SDK_LOG_ERROR, line);
}

void pico_tls_describe(struct altcp_pcb *pcb, char *out, size_t cap) {
  mbedtls_ssl_context *ssl = altcp_tls_context(pcb);
  if (ssl == NULL) {
    snprintf(out, cap, "TLS");
    return;
  }
  snprintf(out, cap, "%s, %s%s", mbedtls_ssl_get_version(ssl), mbedtls_ssl_get_ciphersuite(ssl),
           verify_state.dates_skipped ? "; certificate dates not checked (no SNTP time yet)" : "");
}

void pico_tls_close_notify(struct altcp_pcb *pcb) {
  mbedtls_ssl_context *ssl = altcp_tls_context(pcb);
  if (ssl != NULL && mbedtls_ssl_is_handshake_over(ssl)) (void)mbedtls_ssl_close_notify(ssl);
}
