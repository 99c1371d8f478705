//! A small HTTP/1.1 client over hyper, shared by the Raft network, the server's checks and
//! `strata client`: one request, a deadline, the whole body back.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::HeaderMap;
use hyper::{Method, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// A reply: status, headers and body.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

/// A pooled HTTP client (cheap to clone).
#[derive(Clone)]
pub struct HttpClient {
    inner: Client<HttpConnector, Full<Bytes>>,
}

impl Default for HttpClient {
    fn default() -> Self {
        HttpClient::new()
    }
}

impl HttpClient {
    /// A client with keep-alive connections.
    pub fn new() -> HttpClient {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(2)));
        HttpClient {
            inner: Client::builder(TokioExecutor::new()).build(connector),
        }
    }

    /// Sends one request and reads the whole reply, failing after `timeout`.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<Reply, String> {
        let mut builder = hyper::Request::builder().method(method).uri(url);
        for (name, value) in headers {
            builder = builder.header(*name, value);
        }
        let request = builder
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| format!("{url}: {e}"))?;
        let exchange = async {
            let response = self
                .inner
                .request(request)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("{url}: reading the reply: {e}"))?
                .to_bytes();
            Ok(Reply {
                status,
                headers,
                body,
            })
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| format!("{url}: no reply within {timeout:?}"))?
    }
}
