# Captures what transformers/PyTorch compute for RoPE, for ropekit's test data (issues 21, 22).
import os, sys, json, math, traceback, inspect, tarfile, io, importlib, time
import numpy as np
import torch
import transformers
from transformers import AutoConfig

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
LOG = open(os.path.join(OUT, "log.txt"), "w")
T0 = time.time()
def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True); LOG.write(s + "\n"); LOG.flush()

info = {"torch": torch.__version__, "transformers": transformers.__version__, "numpy": np.__version__,
        "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "python": sys.version}
log("INFO", json.dumps(info))
DEVS = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])

arrays = {}   # name -> np array (saved in one npz)
records = []  # JSON records

def bits(t):
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.float32: return t.view(torch.int32).numpy().astype(np.uint32)
    if t.dtype in (torch.bfloat16, torch.float16): return t.view(torch.int16).numpy().astype(np.uint16)
    if t.dtype == torch.float64: return t.view(torch.int64).numpy().astype(np.uint64)
    return t.numpy()

def tojson(x):
    if isinstance(x, dict): return {str(k): tojson(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)): return [tojson(v) for v in x]
    if isinstance(x, (int, float, str, bool)) or x is None: return x
    if isinstance(x, torch.Tensor): return x.tolist()
    return repr(x)

def rotary_classes(model_type):
    mods = []
    for name in [f"transformers.models.{model_type}.modeling_{model_type}"]:
        try: mods.append(importlib.import_module(name))
        except Exception as e: log("  import fail", name, repr(e)[:200])
    out = []
    for m in mods:
        for k, v in vars(m).items():
            if k.endswith("RotaryEmbedding") and inspect.isclass(v) and v.__module__ == m.__name__:
                out.append(v)
    return out

def layer_types_of(cfg):
    lt = getattr(cfg, "layer_types", None)
    return sorted(set(lt)) if lt else [None]

def dump_module(tag, mod):
    rec = {}
    for n, b in mod.named_buffers():
        arrays[f"{tag}/buf/{n}"] = bits(b); rec[f"buf:{n}"] = [str(b.dtype), list(b.shape)]
    for k, v in vars(mod).items():
        if isinstance(v, (float, int)) and not isinstance(v, bool): rec[f"attr:{k}"] = v
        if isinstance(v, dict) and "scaling" in k: rec[f"attr:{k}"] = tojson(v)
        if isinstance(v, str): rec[f"attr:{k}"] = v
    return rec

POS = sorted(set([0, 1, 2, 3, 7, 100, 255, 256, 257, 258, 511, 512, 513, 1023, 1024, 1025, 1857, 2047, 2048, 2049,
                  2050, 4095, 4096, 8191, 8192, 32767, 65535, 131071, 262143, 400000, 1048575, 1048576, 2300000,
                  4194303, 9999999, 16777215, 16777216, 16777217, 33554431, 2**31 - 1]))

def forward_tables(tag, mod, dev, lt, dtypes=("float32", "bfloat16", "float16"), positions=POS):
    pid = torch.tensor([positions], dtype=torch.long, device=dev)
    for dt in dtypes:
        x = torch.zeros(1, 1, 8, dtype=getattr(torch, dt), device=dev)
        try:
            if lt is None: cos, sin = mod(x, pid)
            else: cos, sin = mod(x, pid, lt)
            arrays[f"{tag}/cos/{dt}"] = bits(cos[0]); arrays[f"{tag}/sin/{dt}"] = bits(sin[0])
        except Exception as e:
            log("  forward fail", tag, dt, repr(e)[:300])

def set_tf32(on):
    try: torch.backends.cuda.matmul.allow_tf32 = on
    except Exception: pass
    try: torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"
    except Exception: pass

def run_case(name, model_type, kw, text=False, tables=True, extra_seq=()):
    log("CASE", name)
    rec = {"name": name, "model_type": model_type, "input": kw}
    try:
        cfg = AutoConfig.for_model(model_type, **kw)
        full = cfg
        if text and hasattr(cfg, "get_text_config"): cfg = cfg.get_text_config()
        rec["config"] = tojson(cfg.to_dict())
        rec["rope_parameters"] = tojson(getattr(cfg, "rope_parameters", None))
        rec["rope_scaling"] = tojson(getattr(cfg, "rope_scaling", None))
        rec["layer_types"] = tojson(getattr(cfg, "layer_types", None))
        classes = rotary_classes(model_type) or rotary_classes(getattr(cfg, "model_type", model_type))
        rec["classes"] = [c.__name__ for c in classes]
        for cls in classes:
            sig = inspect.signature(cls.__init__)
            for dev in DEVS:
                for lt in layer_types_of(cfg) if "layer_type" in sig.parameters else [None]:
                    tag = f"{name}/{cls.__name__}/{dev}/{lt}"
                    try:
                        with torch.device(dev):
                            mod = cls(config=cfg, device=dev, **({"layer_type": lt} if lt else {}))
                        rec[tag] = dump_module(tag, mod)
                        fsig = inspect.signature(cls.forward)
                        flt = lt if "layer_type" in fsig.parameters else None
                        if tables:
                            if dev == "cuda":
                                set_tf32(False); forward_tables(tag, mod, dev, flt)
                                set_tf32(True); forward_tables(tag + "/tf32", mod, dev, flt, dtypes=("float32", "bfloat16")); set_tf32(False)
                            else:
                                forward_tables(tag, mod, dev, flt)
                        for T in extra_seq:
                            pid = torch.tensor([[0, T - 1]], dtype=torch.long, device=dev)
                            x = torch.zeros(1, 1, 8, dtype=torch.float32, device=dev)
                            cos, sin = (mod(x, pid) if flt is None else mod(x, pid, flt))
                            rec[f"{tag}/seq{T}"] = dump_module(f"{tag}/seq{T}", mod)
                            arrays[f"{tag}/seq{T}/cos_last"] = bits(cos[0, -1]); arrays[f"{tag}/seq{T}/sin_last"] = bits(sin[0, -1])
                    except Exception as e:
                        rec[tag] = {"error": repr(e)[:500]}
                        log("  fail", tag, repr(e)[:300])
        # the init functions directly, where present
        try:
            from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
            rec["rope_init_functions"] = sorted(ROPE_INIT_FUNCTIONS.keys())
        except Exception as e:
            rec["rope_init_functions"] = repr(e)
    except Exception as e:
        rec["error"] = traceback.format_exc()[-1500:]
        log("  CASE FAIL", name, repr(e)[:300])
    records.append(rec)

L = dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, num_hidden_layers=2, intermediate_size=64, vocab_size=64)
def llama(**k):
    d = dict(L); d.update(k); return d

# ---- schemes on the Llama rotary module, transformers 4 style (rope_scaling) and 5 style (rope_parameters)
cases = [
  ("default_128_1e4", "llama", llama(rope_theta=1e4, max_position_embeddings=4096)),
  ("default_128_5e5", "llama", llama(rope_theta=5e5, max_position_embeddings=8192)),
  ("default_64_1e4", "llama", llama(hidden_size=2048, head_dim=64, rope_theta=1e4)),
  ("default_80_1e4", "llama", llama(hidden_size=2560, head_dim=80, rope_theta=1e4)),
  ("default_256_1e6", "llama", llama(hidden_size=2560, head_dim=256, rope_theta=1e6)),
  ("linear_8_256_1e6", "llama", llama(hidden_size=2560, head_dim=256, rope_theta=1e6, rope_scaling={"rope_type": "linear", "factor": 8.0})),
  ("linear_4_128_1e4", "llama", llama(rope_theta=1e4, rope_scaling={"type": "linear", "factor": 4.0})),
  ("llama3_8b", "llama", llama(rope_theta=5e5, max_position_embeddings=131072, rope_scaling={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"})),
  ("llama3_1b", "llama", llama(hidden_size=2048, head_dim=64, rope_theta=5e5, max_position_embeddings=131072, rope_scaling={"factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"})),
  ("yarn_qwen25_x4", "qwen2", dict(hidden_size=3584, num_attention_heads=28, num_key_value_heads=4, num_hidden_layers=2, rope_theta=1e6, max_position_embeddings=32768, rope_scaling={"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})),
  ("yarn_attnfactor_qwen3", "qwen3", dict(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, head_dim=128, num_hidden_layers=2, rope_theta=1e6, max_position_embeddings=131072, rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "attn_factor": 0.8782488562869419})),
  ("yarn_mscale", "llama", llama(rope_theta=1e4, max_position_embeddings=32768, rope_scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096, "mscale": 0.707, "mscale_all_dim": 0.0})),
  ("yarn_mscale_alldim", "llama", llama(rope_theta=1e4, max_position_embeddings=32768, rope_scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096, "mscale": 1.0, "mscale_all_dim": 1.0})),
  ("yarn_attention_factor", "llama", llama(rope_theta=1e4, max_position_embeddings=32768, rope_scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096, "attention_factor": 1.25, "beta_fast": 16, "beta_slow": 2})),
  ("yarn_gptoss_llama", "llama", llama(hidden_size=4096, head_dim=64, rope_theta=150000.0, max_position_embeddings=131072, rope_scaling={"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False})),
  ("yarn_gptoss_trunc_llama", "llama", llama(hidden_size=4096, head_dim=64, rope_theta=150000.0, max_position_embeddings=131072, rope_scaling={"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0})),
  ("dynamic_2_128_1e4", "llama", llama(rope_theta=1e4, max_position_embeddings=4096, rope_scaling={"rope_type": "dynamic", "factor": 2.0})),
  ("longrope_synthetic_96", "phi3", dict(hidden_size=3072, num_attention_heads=32, num_key_value_heads=32, num_hidden_layers=2, rope_theta=1e4, max_position_embeddings=131072, original_max_position_embeddings=4096, rope_scaling={"type": "longrope", "short_factor": [1.0 + 0.01 * i for i in range(48)], "long_factor": [1.0 + 0.5 * i for i in range(48)]})),
  ("partial_half_128", "llama", llama(rope_theta=1e4, partial_rotary_factor=0.5)),
  ("neox_pythia70m", "gpt_neox", dict(hidden_size=512, num_attention_heads=8, num_hidden_layers=2, rotary_pct=0.25, rotary_emb_base=10000, max_position_embeddings=2048)),
  ("gemma3_4b_text", "gemma3_text", dict(hidden_size=2560, num_attention_heads=8, num_key_value_heads=4, head_dim=256, num_hidden_layers=12, rope_theta=1e6, rope_local_base_freq=1e4, rope_scaling={"rope_type": "linear", "factor": 8.0}, sliding_window=1024, sliding_window_pattern=6, max_position_embeddings=131072)),
  ("deepseek_v3_yarn", "deepseek_v3", dict(num_hidden_layers=2, qk_rope_head_dim=64, qk_nope_head_dim=128, rope_theta=10000, max_position_embeddings=163840, rope_scaling={"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0})),
]
# transformers 5 style for a few
cases += [
  ("t5_llama3_8b", "llama", llama(max_position_embeddings=131072, rope_parameters={"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})),
  ("t5_yarn_trunc_false", "llama", llama(head_dim=64, max_position_embeddings=131072, rope_parameters={"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0, "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": False})),
  ("t5_proportional_llama", "llama", llama(hidden_size=4096, head_dim=512, num_attention_heads=8, rope_parameters={"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25})),
  ("t5_proportional_f8", "llama", llama(hidden_size=4096, head_dim=256, num_attention_heads=16, rope_parameters={"rope_type": "proportional", "rope_theta": 1e6, "partial_rotary_factor": 0.25, "factor": 8.0})),
  ("t5_partial_default", "llama", llama(rope_parameters={"rope_type": "default", "rope_theta": 1e4, "partial_rotary_factor": 0.25})),
]
for c in cases:
    extra = (4096, 4097, 8192, 10000, 32768) if c[0].startswith("dynamic") else ((4096, 4097, 131072) if c[0].startswith("longrope") else ())
    run_case(c[0], c[1], c[2], extra_seq=extra, tables=not extra)

# ---- every model type's defaults as transformers 5.17 has them
MODEL_TYPES = ["llama", "mistral", "qwen2", "qwen2_vl", "qwen2_5_vl", "qwen3", "qwen3_vl", "qwen3_next", "deepseek_v3", "deepseek_v2",
               "gemma2", "gemma3_text", "gemma3", "gemma4_text", "gemma4", "llama4_text", "llama4", "gpt_oss", "phi3",
               "smollm3", "gpt_neox", "gptj", "olmo2", "glm4", "cohere2", "ministral", "exaone4", "falcon_h1", "mimo"]
for mt in MODEL_TYPES:
    run_case(f"defaults_{mt}", mt, {}, text=True, tables=False)
log("cases done", time.time() - T0)

# ---- score error vs position (issue 22's measurement) with the Llama module and apply_rotary_pos_emb
try:
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
    cfg = AutoConfig.for_model("llama", **llama(rope_theta=1e4, max_position_embeddings=4096))
    g = torch.Generator().manual_seed(1234)
    N, n = 64, 128
    q0 = torch.randn(N, n, generator=g, dtype=torch.float32); k0 = torch.randn(N, n, generator=g, dtype=torch.float32)
    arrays["score/q_fp32"] = bits(q0); arrays["score/k_fp32"] = bits(k0)
    SP = sorted(set([0, 1, 100, 1000, 4095, 10000, 32767, 100000, 262143, 400000, 1048575, 2300000, 4194303, 8388607, 9999999, 16777214, 16777215]))
    lag = 1
    for dev in DEVS:
        rot = LlamaRotaryEmbedding(config=cfg, device=dev)
        inv = 1.0 / (1e4 ** (torch.arange(0, n, 2, dtype=torch.float64) / n))
        for dt in ("float32", "bfloat16", "float16"):
            for tf in ((False, True) if dev == "cuda" else (False,)):
                set_tf32(tf)
                D = getattr(torch, dt)
                q = q0.to(D).to(dev); k = k0.to(D).to(dev)
                res = []
                for p in SP:
                    pid = torch.tensor([[p + lag, p]], device=dev)
                    cos, sin = rot(q.view(1, 1, N, n)[:, :, :1], pid)   # x only sets dtype/device
                    qq = q.view(1, N, 1, n).expand(1, N, 2, n).clone(); kk = k.view(1, N, 1, n).expand(1, N, 2, n).clone()
                    qr, kr = apply_rotary_pos_emb(qq, kk, cos, sin)
                    s = (qr[0, :, 0].float() * kr[0, :, 1].float()).sum(-1)   # q at p+lag, k at p
                    # exact: float64 rotation of the dtype-rounded content, float64 theta
                    qd = q.double().cpu(); kd = k.double().cpu()
                    def rot64(x, pos):
                        ang = pos * inv
                        c = torch.cat([torch.cos(ang), torch.cos(ang)]); s_ = torch.cat([torch.sin(ang), torch.sin(ang)])
                        x1, x2 = x[:, : n // 2], x[:, n // 2:]
                        return x * c + torch.cat([-x2, x1], -1) * s_
                    se = (rot64(qd, p + lag) * rot64(kd, p)).sum(-1)
                    res.append(np.stack([s.double().cpu().numpy(), se.numpy(), qd.norm(dim=-1).numpy() * kd.norm(dim=-1).numpy()]))
                    if p in (0, 4095, 1048575, 16777215):
                        arrays[f"score/{dev}/{dt}/tf32={tf}/p{p}/qrot"] = bits(qr[0, :, 0]); arrays[f"score/{dev}/{dt}/tf32={tf}/p{p}/krot"] = bits(kr[0, :, 1])
                arr = np.stack(res)  # positions x 3 x N
                arrays[f"score/{dev}/{dt}/tf32={tf}"] = arr
                rel = (arr[:, 0] - arr[:, 1]) / arr[:, 2]
                log("SCORE", dev, dt, "tf32" if tf else "", " ".join(f"{p}:{math.sqrt((r**2).mean()):.3g}" for p, r in zip(SP, rel)))
        set_tf32(False)
    arrays["score/positions"] = np.array(SP)
except Exception:
    log("SCORE FAIL", traceback.format_exc()[-2000:])

# ---- pow kernels: CPU vs GPU on base ** (arange/dim)
try:
    for base, dim in ((1e4, 128), (5e5, 128), (1e6, 256), (150000.0, 64), (1e4, 96)):
        for dev in DEVS:
            e = torch.arange(0, dim, 2, dtype=torch.int64, device=dev).float() / dim
            arrays[f"pow/{base}/{dim}/{dev}"] = bits(base ** e)
except Exception:
    log("POW FAIL", traceback.format_exc()[-1000:])

np.savez_compressed(os.path.join(OUT, "arrays.npz"), **{k.replace("/", "|"): v for k, v in arrays.items()})
with open(os.path.join(OUT, "records.json"), "w") as f:
    json.dump({"info": info, "records": records}, f, indent=1, default=repr)
# transformers' sources, to read (not to commit)
try:
    root = os.path.dirname(transformers.__file__)
    with tarfile.open(os.path.join(OUT, "src.tar.gz"), "w:gz") as tf_:
        tf_.add(os.path.join(root, "modeling_rope_utils.py"), "modeling_rope_utils.py")
        for mt in MODEL_TYPES:
            d = os.path.join(root, "models", mt)
            for fn in (f"modeling_{mt}.py", f"configuration_{mt}.py", f"modular_{mt}.py"):
                if os.path.exists(os.path.join(d, fn)): tf_.add(os.path.join(d, fn), f"{mt}/{fn}")
        for fn in ("configuration_utils.py", "integrations/ggml.py", "modeling_gguf_pytorch_utils.py"):
            if os.path.exists(os.path.join(root, fn)): tf_.add(os.path.join(root, fn), fn)
except Exception:
    log("TAR FAIL", traceback.format_exc()[-1000:])
log("DONE", time.time() - T0, "arrays", len(arrays), "records", len(records))
