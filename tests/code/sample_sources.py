"""Source files of the fixture repository, one per language, with known symbols."""

from __future__ import annotations

#: Every language the indexer must parse (the issue's list, plus Markdown).
EXPECTED_LANGUAGES = {
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
    "csharp",
    "ruby",
    "php",
    "kotlin",
    "swift",
    "bash",
    "markdown",
}

PYTHON = '''"""Upload helpers."""
import time

MAX_RETRIES = 3


def retry_upload(path: str, attempts: int = MAX_RETRIES) -> bool:
    """Retry a failed upload with exponential backoff."""
    for attempt in range(attempts):
        time.sleep(2**attempt)
    return False


class Session:
    """An HTTP session."""

    class Adapter:
        def send(self, request):
            return request

    def send(self, request):
        """Send a request."""
        return self.getUserName(request)

    def getUserName(self, request):
        return request.user
'''

JAVASCRIPT = """// Formats a price.
export function formatPrice(cents) {
  return (cents / 100).toFixed(2);
}

class Cart {
  addItem(item) {
    this.items.push(item);
  }
}

const TAX_RATE = 0.2;
const total = (items) => items.length;
"""

TYPESCRIPT = """/** A shape with an area. */
export interface Shape {
  area(): number;
}

export class Circle implements Shape {
  constructor(private r: number) {}
  area(): number {
    return Math.PI * this.r * this.r;
  }
}

type Point = { x: number; y: number };

enum Color {
  Red,
  Green,
}
"""

TSX = """// A greeting component.
export function Greeting(props: { name: string }) {
  return <div>Hello {props.name}</div>;
}
"""

GO = """package server

// Server serves requests.
type Server struct {
	addr string
}

// Handler handles things.
type Handler interface {
	Handle() error
}

// Run starts the server.
func (s *Server) Run() error {
	return nil
}

func NewServer(addr string) *Server {
	return &Server{addr: addr}
}

const DefaultPort = 8080
"""

RUST = """/// A point in space.
pub struct Point {
    x: i32,
}

impl Point {
    /// Makes a point.
    pub fn new(x: i32) -> Self {
        Point { x }
    }
}

pub trait Shape {
    fn area(&self) -> f64;
}

pub enum Direction {
    North,
}

pub const ORIGIN: i32 = 0;

fn main() {}
"""

JAVA = """package app;

/** Repository of users. */
public class UserRepository {
    public static final int MAX_USERS = 100;

    /** Finds a user by id. */
    public String findUser(int id) {
        return "u" + id;
    }

    interface Listener {
        void changed();
    }
}
"""

C = """#include <stdio.h>

#define BUFFER_SIZE 64

/* A 2D point. */
struct point {
    int x;
    int y;
};

/* Adds two numbers. */
int add(int a, int b) {
    return a + b;
}
"""

CPP = """namespace geo {

// A vector type.
class Vec {
public:
    double length() const { return 0.0; }
};

}

int square(int x) {
    return x * x;
}
"""

CSHARP = """namespace Shop
{
    /// <summary>An order.</summary>
    public class Order
    {
        public const int MaxLines = 10;

        public decimal Total { get; set; }

        public void Submit()
        {
        }
    }

    public interface IPayment
    {
        void Pay();
    }
}
"""

RUBY = """# Billing module.
module Billing
  # An invoice.
  class Invoice
    TAX = 0.2

    def total
      42
    end

    def self.build
      new
    end
  end
end
"""

PHP = """<?php
namespace App;

/** Sends mail. */
class Mailer {
    const RETRIES = 3;

    public function send($to) {
        return true;
    }
}

function helper() {
    return 1;
}
"""

KOTLIN = """package demo

/** A shape. */
interface Shape {
    fun area(): Double
}

class Box(val side: Double) : Shape {
    override fun area(): Double {
        return side * side
    }
}

fun main() {
    println("hi")
}

const val LIMIT = 10
"""

SWIFT = """/// A vehicle.
class Car {
    func drive() {
    }
}

struct Wheel {
    let size: Int
}

protocol Drivable {
    func drive()
}

func honk() {
}
"""

BASH = """#!/bin/bash
# Deploys the app.
deploy() {
  echo "deploying"
}

function cleanup {
  rm -rf /tmp/build
}

deploy
"""

MARKDOWN = """# Guide

Intro text.

## Install

Run the installer.

### Linux

Use apt.

## Usage

Call it.
"""
