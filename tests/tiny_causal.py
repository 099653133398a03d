"""Tiny random causal LMs on a BPE tokenizer trained on a few sentences, and the naive per-sentence
log-probability they are checked against: a test helper (tests/ is on ``sys.path``, as for
``tiny_mlm``), shared by the scoring, prompting, CLI and parallel tests."""
from __future__ import annotations

import torch

CORPUS = [
    "The cat sat on the mat.",
    "A dog ran in the park and the children laughed.",
    "I like to eat apples in the morning.",
    "She told me that the train was late again.",
    "Colorless green ideas sleep furiously.",
    "We went to the store to buy some bread and milk.",
]


#: sentences the causal-scoring tests score: several lengths, one of a single word
SENTENCES = [
    "The cat sat on the mat.",
    "A dog ran.",
    "Colorless green ideas sleep furiously.",
    "We went to the store to buy some bread and milk.",
    "milk",
    "The children laughed in the park.",
]


def build_tokenizer(bos: bool = True):
    """A byte-level BPE tokenizer trained on CORPUS (GPT-2 style leading-space tokens)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<s>", "</s>", "<pad>"] if bos else ["<|endoftext|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 3, trainer)
    if bos:
        return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                       pad_token="<pad>")
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>")


def save_tiny_llama(folder, seed: int = 0, head: bool = True):
    """Random 2-layer Llama (or its headless LlamaModel) + tokenizer saved to ``folder``."""
    from transformers import LlamaConfig, LlamaForCausalLM, LlamaModel

    tokenizer = build_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = (LlamaForCausalLM if head else LlamaModel)(config)
    # larger weights than the default init so that probabilities differ clearly between tokens
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(20.0 if p.dim() > 1 else 1.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def save_tiny_gpt2(folder):
    """Random GPT-2 whose tokenizer has only <|endoftext|> (no BOS): EOS is the start token."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = build_tokenizer(bos=False)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=4, n_positions=64,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(1)
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def naive_logprob(model, tokenizer, sentence: str, start: str) -> float:
    """Definition: sum_i log p(t_i | start, t_<i), one unpadded sentence, float64 softmax."""
    ids = [tokenizer.convert_tokens_to_ids(start)] + tokenizer(sentence, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    lp = torch.log_softmax(logits, -1)
    return float(sum(lp[i, ids[i + 1]] for i in range(len(ids) - 1)))
