// Command httpecho is the local seed tests' pod program: it serves its hostname on :8080, fetches peers by
// name, dials addresses, persists a value under /data, reads files and records SIGTERM.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	hostname, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, hostname) })
	mux.HandleFunc("/healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/peer", func(w http.ResponseWriter, r *http.Request) {
		// A new connection for every request: an idle one kept from an earlier request would pass any
		// NetworkPolicy created since (policies judge new connections).
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Get("http://" + r.URL.Query().Get("host") + ":8080/")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		_, _ = io.Copy(w, resp.Body)
	})
	mux.HandleFunc("/dial", func(w http.ResponseWriter, r *http.Request) {
		// A TCP connection only: whether a NetworkPolicy lets this pod reach addr, whatever speaks there.
		conn, err := net.DialTimeout("tcp", r.URL.Query().Get("addr"), 3*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_ = conn.Close()
		fmt.Fprint(w, "connected")
	})
	mux.HandleFunc("/write", func(w http.ResponseWriter, r *http.Request) {
		if err := os.WriteFile("/data/value", []byte(r.URL.Query().Get("v")), 0o644); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("/read", func(w http.ResponseWriter, _ *http.Request) {
		data, err := os.ReadFile("/data/value")
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		_, _ = w.Write(data)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		data, err := os.ReadFile(r.URL.Query().Get("path"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		_, _ = w.Write(data)
	})
	mux.HandleFunc("/uid", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, os.Getuid()) })

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM)
	go func() {
		<-signals
		_ = os.WriteFile("/data/sigterm", []byte(hostname), 0o644)
		os.Exit(0)
	}()
	if err := http.ListenAndServe(":8080", mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
