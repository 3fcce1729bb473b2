/*
 * mbedtls 3.6 for the sdk firmware's wss:// client: TLS 1.3 and TLS 1.2, ECDHE with ECDSA or RSA
 * certificates, AES-GCM (what Caddy, nginx and Traefik offer by default),
 * certificate dates checked against the SNTP clock (pico_clock.c).
 */
#ifndef SDK_MBEDTLS_CONFIG_H
#define SDK_MBEDTLS_CONFIG_H

/* lwIP's altcp_tls_mbedtls.c (the copy pico-sdk ships for mbedtls 3) reads private fields. */
#define MBEDTLS_ALLOW_PRIVATE_ACCESS

/* Platform: entropy from pico_rand (pico_mbedtls.c); time from pico_clock.c. */
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE
#define MBEDTLS_PLATFORM_TIME_ALT
#define MBEDTLS_PLATFORM_GMTIME_R_ALT
#define MBEDTLS_PLATFORM_MS_TIME_ALT
#define MBEDTLS_ENTROPY_HARDWARE_ALT
#define MBEDTLS_NO_PLATFORM_ENTROPY
/* No error strings (~10 KB): failures are logged with their code and our own words. */
#define MBEDTLS_X509_REMOVE_INFO

/* TLS client, 1.2 and 1.3, with SNI. Records: a server may send 16 KB ones (IN must hold one);
 * what we send is cut to OUT. */
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_SSL_PROTO_TLS1_3
#define MBEDTLS_SSL_TLS1_3_COMPATIBILITY_MODE
#define MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ENABLED
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
#define MBEDTLS_SSL_KEEP_PEER_CERTIFICATE
#define MBEDTLS_SSL_IN_CONTENT_LEN 16384
#define MBEDTLS_SSL_OUT_CONTENT_LEN 4096
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
/* No precomputed base-point tables: ~5 KB less flash and less RAM, for slower multiplications by
 * the base point (ECDHE key generation; a few hundred ms on a Cortex-M0+, not measured on a board). */
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0
#define MBEDTLS_ECP_WINDOW_SIZE 4
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_PKCS1_V21

/* TLS 1.3 runs through PSA (psa_crypto_init in pico_tls.c); its key schedule is HKDF. */
#define MBEDTLS_PSA_CRYPTO_C
#define MBEDTLS_HKDF_C
#define MBEDTLS_PSA_KEY_SLOT_COUNT 8

/* Ciphers: AES-GCM only (no CBC suites; every server default offers AES-GCM; ChaCha20 would cost
 * ~5 KB of flash). */
#define MBEDTLS_AES_C
#define MBEDTLS_AES_FEWER_TABLES
#define MBEDTLS_BLOCK_CIPHER_NO_DECRYPT /* GCM only encrypts with AES */
#define MBEDTLS_GCM_C
#define MBEDTLS_CIPHER_C

/* Building blocks */
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_CTR_DRBG_C
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ENTROPY_C
#define MBEDTLS_MD_C
#define MBEDTLS_OID_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_RSA_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_C
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C

#endif /* SDK_MBEDTLS_CONFIG_H */
