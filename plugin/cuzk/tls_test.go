package cuzk

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/snarkd/snarkd/config"
	"github.com/snarkd/snarkd/plugin/cuzk/cuzktest"
	pb "github.com/snarkd/snarkd/plugin/cuzk/proto/cuzk/v1"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns their paths and a
// pool holding the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "snarkd test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestTLS serves on loopback TCP with TLS: a TLS client that trusts the certificate gets
// answers, a plaintext client (Curio's transport) does not.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	h := newHarness(t, config.Cuzk{ListenAddress: "127.0.0.1:0", TLSCertFile: certFile, TLSKeyFile: keyFile})
	if h.addr.Network != "tcp" || !h.addr.Loopback() {
		t.Fatalf("listening on %+v", h.addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := h.client.GetStatus(ctx, &pb.GetStatusRequest{}); err == nil {
		t.Fatal("a plaintext client got an answer from a TLS listener")
	}
	c, conn, err := cuzktest.Dial(h.addr.String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := c.GetStatus(ctx, &pb.GetStatusRequest{}); err != nil {
		t.Fatalf("TLS client: %v", err)
	}
}

func TestTLSConfigErrors(t *testing.T) {
	if _, err := ServerOptions(config.Cuzk{TLSCertFile: "/nonexistent/cert.pem", TLSKeyFile: "/nonexistent/key.pem"}); err == nil {
		t.Fatal("missing certificate files accepted")
	}
	certFile, keyFile, _ := selfSigned(t)
	if _, err := ServerOptions(config.Cuzk{TLSCertFile: certFile, TLSKeyFile: keyFile, TLSClientCAFile: keyFile}); err == nil {
		t.Fatal("a client CA file without certificates accepted")
	}
}
