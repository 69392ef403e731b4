/*
 * mbedTLS for an LLM endpoint (PKG_AGENT_TLS_LEAN_MBEDTLS): the mbedtls
 * package's tls_config.h builds almost every cipher, key exchange, protocol
 * version, DTLS, the server side and X.509 writing. Current API endpoints
 * (OpenAI, Anthropic, DeepSeek, SiliconFlow, Qwen, a LAN gateway) need a
 * TLS 1.2 client with:
 *   - ECDHE key exchange, signed with RSA or ECDSA certificates;
 *   - AES-GCM or ChaCha20-Poly1305;
 *   - P-256, P-384 or X25519;
 *   - SHA-256/384 (SHA-1 stays: older intermediates are signed with it);
 *   - SNI, session tickets, extended master secret.
 * The SConscript names this file as MBEDTLS_USER_CONFIG_FILE, which
 * tls_config.h includes at its end, before mbedTLS's own consistency check;
 * the package's files stay as they are. docs/tls.md gives the flash it
 * saves, measured by tests/qemu/run.sh --tls.
 */
#ifndef AGENT_MBEDTLS_LEAN_H
#define AGENT_MBEDTLS_LEAN_H

/* Protocol versions and roles: TLS 1.2 client only. */
#undef MBEDTLS_SSL_PROTO_TLS1
#undef MBEDTLS_SSL_PROTO_TLS1_1
#undef MBEDTLS_SSL_PROTO_DTLS
#undef MBEDTLS_SSL_DTLS_ANTI_REPLAY
#undef MBEDTLS_SSL_DTLS_HELLO_VERIFY
#undef MBEDTLS_SSL_DTLS_CLIENT_PORT_REUSE
#undef MBEDTLS_SSL_DTLS_BADMAC_LIMIT
#undef MBEDTLS_SSL_SRV_C
#undef MBEDTLS_SSL_CACHE_C
#undef MBEDTLS_SSL_COOKIE_C
#undef MBEDTLS_SSL_TICKET_C
#undef MBEDTLS_SSL_RENEGOTIATION
#undef MBEDTLS_SSL_CBC_RECORD_SPLITTING
#undef MBEDTLS_SSL_TRUNCATED_HMAC
#undef MBEDTLS_SSL_EXPORT_KEYS
#undef MBEDTLS_SSL_FALLBACK_SCSV
#undef MBEDTLS_SSL_ENCRYPT_THEN_MAC
#undef MBEDTLS_SSL_ALL_ALERT_MESSAGES

/* Key exchanges: ECDHE with RSA or ECDSA signatures. */
#undef MBEDTLS_KEY_EXCHANGE_PSK_ENABLED
#undef MBEDTLS_KEY_EXCHANGE_DHE_PSK_ENABLED
#undef MBEDTLS_KEY_EXCHANGE_ECDHE_PSK_ENABLED
#undef MBEDTLS_KEY_EXCHANGE_RSA_PSK_ENABLED
#undef MBEDTLS_KEY_EXCHANGE_RSA_ENABLED
#undef MBEDTLS_KEY_EXCHANGE_DHE_RSA_ENABLED
#undef MBEDTLS_KEY_EXCHANGE_ECDH_ECDSA_ENABLED
#undef MBEDTLS_KEY_EXCHANGE_ECDH_RSA_ENABLED
#undef MBEDTLS_DHM_C

/* Ciphers: AES-GCM and ChaCha20-Poly1305. */
#undef MBEDTLS_CIPHER_MODE_CBC
#undef MBEDTLS_CIPHER_MODE_CFB
#undef MBEDTLS_CIPHER_MODE_CTR
#undef MBEDTLS_CIPHER_PADDING_PKCS7
#undef MBEDTLS_CIPHER_PADDING_ONE_AND_ZEROS
#undef MBEDTLS_CIPHER_PADDING_ZEROS_AND_LEN
#undef MBEDTLS_CIPHER_PADDING_ZEROS
#undef MBEDTLS_ARC4_C
#undef MBEDTLS_BLOWFISH_C
#undef MBEDTLS_CAMELLIA_C
#undef MBEDTLS_CCM_C
#undef MBEDTLS_DES_C
#undef MBEDTLS_XTEA_C
#undef MBEDTLS_AESNI_C
#undef MBEDTLS_PADLOCK_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C

/* Curves: P-256, P-384 and X25519. */
#undef MBEDTLS_ECP_DP_SECP192R1_ENABLED
#undef MBEDTLS_ECP_DP_SECP224R1_ENABLED
#undef MBEDTLS_ECP_DP_SECP521R1_ENABLED
#undef MBEDTLS_ECP_DP_SECP192K1_ENABLED
#undef MBEDTLS_ECP_DP_SECP224K1_ENABLED
#undef MBEDTLS_ECP_DP_SECP256K1_ENABLED
#undef MBEDTLS_ECP_DP_BP256R1_ENABLED
#undef MBEDTLS_ECP_DP_BP384R1_ENABLED
#undef MBEDTLS_ECP_DP_BP512R1_ENABLED
/* A client verifies signatures; it makes none. */
#undef MBEDTLS_ECDSA_DETERMINISTIC
#undef MBEDTLS_HMAC_DRBG_C
#undef MBEDTLS_GENPRIME

/* Hashes: MD5 and RIPEMD-160 sign nothing a current endpoint sends. */
#undef MBEDTLS_MD5_C
#undef MBEDTLS_RIPEMD160_C

/* X.509: parse certificates and PEM roots; write nothing, no CRLs/CSRs,
 * no encrypted keys, no test certificates. */
#undef MBEDTLS_PEM_WRITE_C
#undef MBEDTLS_PK_WRITE_C
#undef MBEDTLS_X509_CREATE_C
#undef MBEDTLS_X509_CRT_WRITE_C
#undef MBEDTLS_X509_CSR_WRITE_C
#undef MBEDTLS_X509_CSR_PARSE_C
#undef MBEDTLS_X509_CRL_PARSE_C
#undef MBEDTLS_PKCS5_C
#undef MBEDTLS_PKCS12_C
#undef MBEDTLS_CERTS_C
#undef MBEDTLS_PK_RSA_ALT_SUPPORT

/* Nothing a board uses at run time. */
#undef MBEDTLS_SELF_TEST
#undef MBEDTLS_VERSION_FEATURES
#undef MBEDTLS_DEBUG_C
#undef MBEDTLS_FS_IO
#undef MBEDTLS_TIMING_C

#endif /* AGENT_MBEDTLS_LEAN_H */
