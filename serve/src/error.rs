//! The API's errors: each is a status and a message, sent as `{"error": "..."}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Why a request was not answered with what it asked for.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed: a bad position, an illegal move, an unknown game (400).
    #[error("{0}")]
    BadRequest(String),
    /// Nothing by that name: an unknown run, generation or game (404).
    #[error("{0}")]
    NotFound(String),
    /// No token, or a wrong one (401).
    #[error("this server requires its access token (header x-flipzero-token or ?token=)")]
    Unauthorized,
    /// The player or network cannot be used from this server (403).
    #[error("{0}")]
    Forbidden(String),
    /// Every search slot stayed busy for the whole wait (503).
    #[error("the server is busy with other searches; try again")]
    Busy,
    /// Reading a run failed, or a player failed (500): the message says what.
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::Busy => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.to_string() });
        (self.status(), Json(body)).into_response()
    }
}
