"""HTTP service that turns support-ticket text into 384-d embeddings for the similar-ticket
search index. The encoder is a distilled MiniLM fine-tuned in-house; its weights are shipped
as a plain state_dict next to the tokenizer files."""

import os
import time
from typing import List

import torch
import torch.nn.functional as F
from fastapi import FastAPI
from pydantic import BaseModel
from transformers import AutoConfig, AutoModel, AutoTokenizer

MODEL_DIR = os.environ.get("EMBED_MODEL_DIR", "/models/ticket-minilm")
MAX_TOKENS, MAX_BATCH = 256, 64


class EmbedRequest(BaseModel):
    texts: List[str]
    normalize: bool = True


class EmbedResponse(BaseModel):
    vectors: List[List[float]]
    millis: float


class Encoder:
    def __init__(self, model_dir):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        config = AutoConfig.from_pretrained(model_dir)
        model = AutoModel.from_config(config)
        state = torch.load(os.path.join(model_dir, "encoder_state.pt"), map_location="cpu", weights_only=True)
        state = {k.removeprefix("module."): v for k, v in state.items()}
        missing, unexpected = model.load_state_dict(state, strict=False)
        missing = [k for k in missing if not k.startswith("pooler.")]
        if missing or unexpected:
            raise RuntimeError(f"checkpoint mismatch: missing={missing} unexpected={unexpected}")
        self.model = model.to(self.device).eval()
        if self.device.type == "cuda":
            self.model = self.model.half()

    @torch.inference_mode()
    def embed(self, texts, normalize=True):
        out = []
        for start in range(0, len(texts), MAX_BATCH):
            batch = self.tokenizer(texts[start:start + MAX_BATCH], padding=True, truncation=True,
                                   max_length=MAX_TOKENS, return_tensors="pt")
            batch = {k: v.to(self.device) for k, v in batch.items()}
            hidden = self.model(**batch).last_hidden_state          # (B, T, H)
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
            if normalize:
                pooled = F.normalize(pooled.float(), p=2, dim=1)
            out.append(pooled.float().cpu())
        return torch.cat(out)


app = FastAPI(title="ticket-embeddings")
encoder = Encoder(MODEL_DIR)


@app.get("/healthz")
def health():
    return {"device": str(encoder.device), "training": encoder.model.training}


@app.post("/embed", response_model=EmbedResponse)
def embed(req: EmbedRequest):
    t0 = time.perf_counter()
    vectors = encoder.embed(req.texts, normalize=req.normalize) if req.texts else torch.empty(0, 384)
    return EmbedResponse(vectors=vectors.tolist(), millis=(time.perf_counter() - t0) * 1000)


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8080")))
