"""PTF132 (distributed-launch-local-rank): a parser declaring only --local_rank, while
torch.distributed.launch passes --local-rank since torch 2.0."""
PITFALL = {
    "default_minus_one": "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--local_rank', type=int, default=-1, help='local_rank for distributed training on gpus')\nargs = parser.parse_args()\n",
    "type_only": "import argparse\nimport torch\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--local_rank', type=int)\nargs = parser.parse_args()\ntorch.cuda.set_device(args.local_rank)\n",
    "keyword_order": "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--local_rank', default=-1, type=int, help='node rank for distributed training')\n",
    "in_function": "import argparse\n\ndef get_args():\n    p = argparse.ArgumentParser()\n    p.add_argument('--local_rank', default=0, type=int)\n    return p.parse_args()\n",
    "argument_group": "import argparse\n\nparser = argparse.ArgumentParser()\ndist = parser.add_argument_group('distributed')\ndist.add_argument('--local_rank', type=int, default=0)\n",
}
NEAR_MISS = {
    "both_spellings": "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--local-rank', '--local_rank', type=int, default=0)\n",
    "environment": "import os\n\nlocal_rank = int(os.environ['LOCAL_RANK'])\n",
    "other_option": "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('--world_size', type=int, default=1)\n",
}
SEEN = {
    "default_minus_one": "jeffra/deepspeed-kdd20 test.py (parser.add_argument(\"--local_rank\", type=int, default=-1, help=...))",
    "type_only": "code search 'parser.add_argument(\"--local_rank\" ...' rank 5/6 (add_argument(\"--local_rank\", type=int); torch.cuda.set_device(args.local_rank))",
    "keyword_order": "code search rank 8 (add_argument('--local_rank', default=-1, type=int, help='node rank for distributed training'))",
    "in_function": "code search rank 12 (add_argument('--local_rank', default=0, type=int, ...))",
    "argument_group": "not found by search",
}
